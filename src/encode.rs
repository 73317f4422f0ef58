//! encode: see the module list in lib.rs.
