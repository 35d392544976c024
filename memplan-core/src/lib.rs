//! # memplan-core: static memory planning for neural networks
//!
//! A network runs its operators in a fixed order. Each intermediate tensor (activation) is written
//! by one operator and read by later ones; between its first write and its last read it must stay
//! in memory, and outside that window its bytes can be reused. Planning memory means giving every
//! tensor an offset in one arena so that tensors live at the same step never share bytes, and the
//! arena is as small as possible.
//!
//! Following patent CN113886090A, each tensor is a **rectangle**: its height is its size in bytes,
//! its width its lifetime in steps. A plan stacks the rectangles along the address axis; the arena
//! is the height of the stack.
//!
//! ```text
//!  address
//!     ^
//!  12 |        +-----------+
//!     |        |     c     |
//!   8 +--------+--+--------+
//!     |    a      |   d    |
//!   4 +------+----+--------+
//!     |  b   |      e      |
//!   0 +------+-------------+--> step
//!     0      2    3        5
//! ```
//!
//! No plan can be lower than the most bytes live at one step ([`lower_bound`]); a plan that
//! reaches it is optimal.
//!
//! ## Example
//! ```
//! use memplan_core::{Buffer, Problem, SolveOptions, Solver, lower_bound, solve, validate};
//!
//! let problem = Problem::new(vec![
//!     Buffer::new("input", 1024, 0, 2),
//!     Buffer::new("conv", 4096, 1, 3),
//!     Buffer::new("relu", 4096, 2, 4),
//! ])?;
//! let options = SolveOptions { solver: Solver::BestFit, ..SolveOptions::default() };
//! let solution = solve(&problem, &options)?;
//! assert!(validate(&problem, &solution.plan).is_empty());
//! assert_eq!(solution.plan.arena_size, lower_bound(&problem)); // 8192
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The solvers are compared in the [`solve`](mod@solve) module docs.
//!
//! ## Beyond one arena of independent tensors
//!
//! A model file can ask for more than the plain problem ([`model_plan::plan_model`] applies it all):
//! - **in-place ops** ([`AliasGroups`], [`model_file::INPLACE_KINDS`]): an elementwise or
//!   reshape-like op writes its output over an input nobody reads afterwards; the chain of tensors
//!   that share memory is packed as one rectangle, which can take the arena below the no-sharing
//!   lower bound;
//! - **several pools** ([`plan_pools`]): a small fast memory is filled first (by byte-steps), the
//!   rest spills to the next pool, and each pool is an arena of its own;
//! - **pinned and app-owned tensors**: a fixed offset the planner plans around
//!   ([`Buffer::fixed_offset`]), or no arena space at all (`external`).
//!
//! ```text
//!  sram  +--------+-------+        dram  +--------------------+
//!        | dma    | small |              |   big = act        |   (one rectangle:
//!        |(pinned)+-------+              |   (in place)       |    Relu over its input)
//!        +--------+------> step          +--------------------+--> step
//! ```
//!
//! ## Embedding the planner
//!
//! An engine that plans at load time needs only the planner. Without its default features
//! (`memplan-core = { version = "0.1", default-features = false }`) this crate is the model
//! ([`Problem`], [`Buffer`], [`Plan`]), lifetimes from an op order ([`derive_lifetimes`]), in-place
//! groups ([`AliasGroups`]), pools ([`plan_pools`]), the solvers ([`solve()`]), validation
//! ([`validate()`]) and the lower bounds ([`lower_bound`]), with no dependency at all:
//! `cargo tree -p memplan-core --no-default-features -e normal` lists memplan-core alone. The
//! rest is behind features, all on by default:
//!
//! | feature | what it adds | dependencies |
//! |---|---|---|
//! | `model-file` | `model_file` (the TOML model file, `parse_model`) and `model_plan::plan_model` | `toml` |
//! | `csv` | `read_csv`, `write_problem_csv`, `write_plan_csv` | `csv` |
//! | `render` | `render`: a plan as SVG or HTML (`generated_svg` also with `model-file`) | none |
//! | `codegen` | the generated Rust code: `expand_model`, `codegen::generate` | `proc-macro2`, `quote`; `model-file`, `render` |
//!
//! `examples/embed-planner` in the repository is such an engine, built and tested that way.

mod aliasing;
mod bounds;
#[cfg(feature = "model-file")]
pub mod codegen;
#[cfg(feature = "csv")]
mod csv_format;
mod error;
mod lifetime;
mod model;
#[cfg(feature = "model-file")]
pub mod model_file;
#[cfg(feature = "model-file")]
pub mod model_plan;
mod pools;
#[cfg(feature = "render")]
pub mod render;
pub mod solve;
#[cfg(test)]
mod test_utils;
mod validate;

pub use aliasing::{AliasError, AliasGroups};
pub use bounds::{live_at, live_profile, lower_bound, peak_step};
#[cfg(feature = "codegen")]
pub use codegen::expand_model;
#[cfg(feature = "csv")]
pub use csv_format::{CsvInput, column_alias, read_csv, write_plan_csv, write_problem_csv};
pub use error::InputError;
pub use lifetime::{LifetimeError, OpTensors, Producer, Role, Schedule, derive_lifetimes};
pub use model::{Buffer, Lifetime, Plan, Problem, ProblemError, align_up, checked_align_up};
#[cfg(feature = "model-file")]
pub use model_file::{
    AttrValue, DType, Layout, Model, Op, OpInput, Tensor, Weight, format_byte_size,
    parse_byte_size, parse_model,
};
pub use pools::{Pool, PoolError, PoolPlan, PooledPlan, plan_pools};
pub use solve::{
    DEFAULT_NODE_BUDGET, DEFAULT_OPTIONS, Solution, SolveError, SolveOptions, Solver, TieOrder,
    solve,
};
pub use validate::{DisplayViolation, Violation, validate, validate_offsets};
