//! The NumPy `.npy` header `encode_file` writes before the ids.

/// A NumPy format 1.0 header for a 1-d little-endian uint16/uint32 array of `n` items, always
/// 128 bytes so that it can be rewritten in place once `n` is known.
pub fn npy_header(wide: bool, n: u64) -> Vec<u8> {
    const LEN: usize = 128;
    let descr = if wide { "<u4" } else { "<u2" };
    let dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': ({n},), }}");
    let mut h = b"\x93NUMPY\x01\x00".to_vec();
    h.extend_from_slice(&((LEN - 10) as u16).to_le_bytes());
    h.extend_from_slice(dict.as_bytes());
    h.resize(LEN - 1, b' ');
    h.push(b'\n');
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npy_header_is_aligned_and_parsable() {
        let h = npy_header(true, 12345);
        assert_eq!(h.len(), 128);
        assert!(h.ends_with(b"\n"));
        assert!(String::from_utf8_lossy(&h).contains("'shape': (12345,)"));
    }
}
