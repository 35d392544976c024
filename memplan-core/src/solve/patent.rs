//! The patent's greedy (CN113886090A, claims 3–6). Placeholder until the real solver lands.

use std::fmt;
use std::str::FromStr;

use crate::model::{Plan, Problem};

/// Order among candidates that still tie after the patent's one-step lookahead.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TieOrder {
    /// Larger buffers first, then longer lifetimes, then input order.
    #[default]
    Size,
    /// Longer lifetimes first, then larger buffers, then input order.
    Lifetime,
}

impl TieOrder {
    /// Every tie order.
    pub const ALL: &'static [TieOrder] = &[TieOrder::Size, TieOrder::Lifetime];
}

impl fmt::Display for TieOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TieOrder::Size => "size",
            TieOrder::Lifetime => "lifetime",
        })
    }
}

impl FromStr for TieOrder {
    type Err = ();

    fn from_str(s: &str) -> Result<Self, ()> {
        TieOrder::ALL
            .iter()
            .copied()
            .find(|t| t.to_string() == s)
            .ok_or(())
    }
}

/// Placeholder: best-fit, until the patent's greedy is written.
pub(crate) fn solve(problem: &Problem, _ties: TieOrder) -> Plan {
    crate::solve::best_fit::solve(problem)
}
