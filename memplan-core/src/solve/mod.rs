//! Solvers: each turns a [`Problem`] into a [`Plan`] that validates.
//!
//! | name | method | quality | runtime |
//! |---|---|---|---|
//! | `naive` | no reuse: buffers one above the other | sum of sizes | `O(n)` |
//! | `first-fit` | TFLite Micro: size descending, lowest gap that fits | near LB on models | `O((n + P) log n)`, `P` pairs live together |
//! | `best-fit` | TFLite: size descending, smallest gap that fits | near LB on models | `O((n + P) log n)`, `P` pairs live together |
//! | `patent` | CN113886090A claims 3–6: smallest tentative peak, one-step lookahead on ties | 1.2–1.6x LB on hard sets | incremental: about `O((n + P) log n)` on traces (10^5 buffers in seconds) |
//! | `enumerate` | claim 7: every stacking order (n ≤ 10), pruned by bound and offset order | optimal | `O(n!)` worst |
//! | `exact` | branch and bound over canonical placements (MiniMalloc-style pruning, time-cut splits, restarts), node budget | LB on MiniMalloc A–F in < 300k nodes; optimal when proven | budgeted |
//! | `auto` | best-fit, first-fit; `exact` unless one reached the LB; the patent greedy unless proven optimal | best of all | budgeted |
//!
//! Every solver honours alignment and pinned offsets ([`crate::Buffer::fixed_offset`]).

mod auto;
mod best_fit;
mod enumerate;
mod exact;
mod first_fit;
mod live_index;
mod naive;
mod patent;
mod placements;
mod portfolio;

use std::fmt;
use std::str::FromStr;

pub use patent::TieOrder;

use crate::model::{Plan, Problem};

/// Which algorithm [`solve`] runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Solver {
    /// No reuse: every buffer gets its own bytes.
    Naive,
    /// TFLite Micro's greedy: size descending, lowest gap that fits.
    FirstFit,
    /// TFLite's greedy by size: size descending, smallest gap that fits.
    BestFit,
    /// The patent's greedy (claims 3–6) with the given order among remaining ties, its rounds
    /// measured from the lower-bound height (memplan's addition; see `patent.rs`).
    Patent(TieOrder),
    /// The patent's greedy read literally: the rounds start from an empty arena.
    PatentLiteral(TieOrder),
    /// The patent's exhaustive mode (claim 7): every stacking order, for at most
    /// [`ENUMERATE_MAX_BUFFERS`] buffers.
    Enumerate,
    /// Branch and bound within a node budget; proves optimality when it can.
    Exact,
    /// Best-fit and first-fit, then `exact` unless one of them reached the lower bound, then the
    /// patent's greedy unless the search proved its plan optimal.
    Auto,
}

/// The most buffers [`Solver::Enumerate`] accepts.
pub const ENUMERATE_MAX_BUFFERS: usize = 10;

impl Solver {
    /// Every solver, each once, in the order of the table in this module's docs.
    pub fn all() -> Vec<Solver> {
        let mut all = vec![Solver::Naive, Solver::FirstFit, Solver::BestFit];
        all.extend(Solver::patents());
        all.extend([Solver::Enumerate, Solver::Exact, Solver::Auto]);
        all
    }

    /// The patent's greedy with every tie order, from the lower bound and then read literally.
    pub fn patents() -> Vec<Solver> {
        let floored = TieOrder::ALL.iter().map(|&t| Solver::Patent(t));
        let literal = TieOrder::ALL.iter().map(|&t| Solver::PatentLiteral(t));
        floored.chain(literal).collect()
    }

    /// The name the CLI and the model file use for it.
    pub fn name(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for Solver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Solver::Naive => f.write_str("naive"),
            Solver::FirstFit => f.write_str("first-fit"),
            Solver::BestFit => f.write_str("best-fit"),
            Solver::Patent(ties) if *ties == TieOrder::default() => f.write_str("patent"),
            Solver::Patent(ties) => write!(f, "patent:{ties}"),
            Solver::PatentLiteral(ties) if *ties == TieOrder::default() => {
                f.write_str("patent-literal")
            }
            Solver::PatentLiteral(ties) => write!(f, "patent-literal:{ties}"),
            Solver::Enumerate => f.write_str("enumerate"),
            Solver::Exact => f.write_str("exact"),
            Solver::Auto => f.write_str("auto"),
        }
    }
}

/// A solver name that is not known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownSolver {
    /// The name given.
    pub name: String,
}

impl fmt::Display for UnknownSolver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown solver `{}`; expected one of: {}",
            self.name,
            known_solver_names()
        )
    }
}

impl std::error::Error for UnknownSolver {}

/// The solver names, comma separated, for error messages.
pub fn known_solver_names() -> String {
    Solver::all()
        .iter()
        .map(Solver::name)
        .collect::<Vec<_>>()
        .join(", ")
}

impl FromStr for Solver {
    type Err = UnknownSolver;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        let unknown = || UnknownSolver { name: name.into() };
        Ok(match name {
            "naive" => Solver::Naive,
            "first-fit" => Solver::FirstFit,
            "best-fit" => Solver::BestFit,
            "patent" => Solver::Patent(TieOrder::default()),
            "patent-literal" => Solver::PatentLiteral(TieOrder::default()),
            "enumerate" => Solver::Enumerate,
            "exact" => Solver::Exact,
            "auto" => Solver::Auto,
            _ => {
                if let Some(ties) = name.strip_prefix("patent:") {
                    Solver::Patent(ties.parse().map_err(|_| unknown())?)
                } else if let Some(ties) = name.strip_prefix("patent-literal:") {
                    Solver::PatentLiteral(ties.parse().map_err(|_| unknown())?)
                } else {
                    return Err(unknown());
                }
            }
        })
    }
}

/// Default node budget of [`Solver::Exact`] and [`Solver::Auto`]. Real models never need the
/// search (a greedy reaches the lower bound); the hardest MiniMalloc benchmarks fit their
/// capacity within it (at most about 300,000 nodes, about a second). Parts of more than 256
/// buffers get a proportional share (a node costs `O(n)`), so no search runs longer than a few
/// seconds (4 s measured on a 1,900-buffer random problem). Counted in nodes so every machine
/// gets the same plan.
pub const DEFAULT_NODE_BUDGET: u64 = 500_000;

/// How to solve.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SolveOptions {
    /// The algorithm. Default: [`Solver::Auto`].
    pub solver: Solver,
    /// An arena size to fit within, if any. Exact search may stop as soon as a plan fits.
    /// Default: none (minimise).
    pub capacity: Option<u64>,
    /// Most search nodes the exact search may expand. Default: [`DEFAULT_NODE_BUDGET`].
    pub node_budget: u64,
}

/// The default options: `auto`, no capacity, [`DEFAULT_NODE_BUDGET`].
pub const DEFAULT_OPTIONS: SolveOptions = SolveOptions {
    solver: Solver::Auto,
    capacity: None,
    node_budget: DEFAULT_NODE_BUDGET,
};

impl Default for SolveOptions {
    fn default() -> Self {
        DEFAULT_OPTIONS
    }
}

/// What a solver found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Solution {
    /// The plan; it always validates.
    pub plan: Plan,
    /// `true` only when the plan is proven to be the smallest possible.
    pub optimal: bool,
    /// Search nodes expanded (0 for the heuristics).
    pub nodes: u64,
    /// The solver that produced the plan (for `auto`, the one whose plan won).
    pub solver: Solver,
}

/// Why a solver gave no plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SolveError {
    /// The exhaustive solver was given too many buffers.
    TooManyBuffers {
        /// Buffers in the problem.
        buffers: usize,
        /// The most accepted.
        max: usize,
    },
    /// The solver produced a plan that breaks a rule: a bug in memplan, never returned as a plan.
    InvalidPlan {
        /// The solver that produced it.
        solver: String,
        /// The first broken rule, with buffer names.
        violation: String,
    },
    /// Pinned buffers overlap each other, so no plan can exist.
    PinnedOverlap {
        /// One pinned buffer.
        first: String,
        /// The other.
        second: String,
    },
}

impl fmt::Display for SolveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooManyBuffers { buffers, max } => write!(
                f,
                "`enumerate` tries every order and accepts at most {max} buffers, but the problem \
                 has {buffers}; use `exact` or `auto`"
            ),
            Self::InvalidPlan { solver, violation } => write!(
                f,
                "internal error: `{solver}` produced an invalid plan ({violation}); please report \
                 this with the input"
            ),
            Self::PinnedOverlap { first, second } => write!(
                f,
                "pinned buffers `{first}` and `{second}` are live at the same step and overlap; \
                 move one of the pins"
            ),
        }
    }
}

impl std::error::Error for SolveError {}

/// Runs the chosen solver and checks its plan with [`crate::validate`] (`O(n log n)`).
pub fn solve(problem: &Problem, options: &SolveOptions) -> Result<Solution, SolveError> {
    placements::check_pins(problem)?;
    let solution = match options.solver {
        Solver::Naive => heuristic(problem, Solver::Naive, naive::solve(problem)),
        Solver::FirstFit => heuristic(problem, Solver::FirstFit, first_fit::solve(problem)),
        Solver::BestFit => heuristic(problem, Solver::BestFit, best_fit::solve(problem)),
        Solver::Patent(_) | Solver::PatentLiteral(_) => heuristic(
            problem,
            options.solver,
            portfolio::run_heuristic(problem, options.solver),
        ),
        Solver::Enumerate => enumerate::solve(problem)?,
        Solver::Exact => exact::solve(problem, options),
        Solver::Auto => auto::solve(problem, options),
    };
    // Checked in every profile: a plan that overlaps would corrupt tensors at run time, so a
    // solver's bug becomes an error here, never a plan.
    let violations = crate::validate::validate(problem, &solution.plan);
    if let Some(violation) = violations.first() {
        let offsets: Vec<Option<u64>> = solution.plan.offsets.iter().copied().map(Some).collect();
        return Err(SolveError::InvalidPlan {
            solver: solution.solver.to_string(),
            violation: violation.display(problem, &offsets).to_string(),
        });
    }
    Ok(solution)
}

fn heuristic(problem: &Problem, solver: Solver, plan: Plan) -> Solution {
    let optimal = plan.arena_size == crate::bounds::lower_bound(problem);
    Solution {
        plan,
        optimal,
        nodes: 0,
        solver,
    }
}
