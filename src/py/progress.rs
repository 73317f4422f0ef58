//! The one bridge from the core's progress contract ([`crate::Progress`]) to Python: a
//! report takes the GIL briefly (the core reports about every 100 ms), checks for Ctrl-C,
//! then calls the caller's `progress(done, total)` if given. Whatever that raised (or the
//! `KeyboardInterrupt`) stops the work and is raised again, exactly.

use super::errors::to_py;
use crate::Error;
use pyo3::prelude::*;

pub(super) struct ProgressBridge<'a> {
    callback: Option<&'a Py<PyAny>>,
    /// What a report raised; the core then stops with [`Error::Interrupted`].
    raised: Option<PyErr>,
}

impl<'a> ProgressBridge<'a> {
    pub(super) fn new(callback: &'a Option<Py<PyAny>>) -> Self {
        ProgressBridge {
            callback: callback.as_ref(),
            raised: None,
        }
    }

    /// One report: `false` (stop) when Ctrl-C was pressed or the callback raised.
    pub(super) fn report(&mut self, done: u64, total: u64) -> bool {
        let callback = self.callback;
        let result = Python::attach(|py| {
            py.check_signals().and_then(|()| match callback {
                Some(cb) => cb.call1(py, (done, total)).map(|_| ()),
                None => Ok(()),
            })
        });
        match result {
            Ok(()) => true,
            Err(e) => {
                self.raised = Some(e);
                false
            }
        }
    }

    /// The exception for the core's error `e`: what a report raised, if one did.
    pub(super) fn error(self, py: Python<'_>, e: Error, vocab_size: usize) -> PyErr {
        self.raised.unwrap_or_else(|| to_py(py, e, vocab_size))
    }
}
