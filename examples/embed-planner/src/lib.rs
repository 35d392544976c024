//! An inference engine that plans memory when it loads a graph, not at compile time: what an
//! engine embedding memplan's planner does (see "Embedding the planner" in memplan-core's docs).
//!
//! The engine knows its tensors' sizes and its ops' order only at load time. It hands them to
//! memplan-core, built with `default-features = false` (the model, the solvers, validation and
//! the bounds, with no dependency), and gets back one offset per tensor in one arena.
//!
//! ```
//! use memplan_example_embed_planner::{Graph, Node, plan};
//!
//! // input -> conv -> relu, relu the output.
//! let graph = Graph {
//!     tensors: vec![("input", 1024), ("conv", 4096), ("relu", 4096)],
//!     inputs: vec![0],
//!     outputs: vec![2],
//!     nodes: vec![
//!         Node { inputs: vec![0], outputs: vec![1], scratch: vec![] },
//!         Node { inputs: vec![1], outputs: vec![2], scratch: vec![] },
//!     ],
//! };
//! let arena = plan(&graph)?;
//! assert_eq!(arena.size, 8192);
//! # Ok::<(), String>(())
//! ```

use memplan_core::{
    Buffer, OpTensors, Problem, Schedule, SolveOptions, Solver, derive_lifetimes, lower_bound,
    solve, validate,
};

/// A graph as an engine holds it after loading: tensors by index, ops in execution order.
#[derive(Clone, Debug, Default)]
pub struct Graph {
    /// Each tensor's name and size in bytes.
    pub tensors: Vec<(&'static str, u64)>,
    /// Tensors the caller fills before the first op.
    pub inputs: Vec<usize>,
    /// Tensors the caller reads after the last op.
    pub outputs: Vec<usize>,
    /// The ops, in the order they run.
    pub nodes: Vec<Node>,
}

/// One op of a [`Graph`].
#[derive(Clone, Debug, Default)]
pub struct Node {
    /// Tensors it reads.
    pub inputs: Vec<usize>,
    /// Tensors it writes.
    pub outputs: Vec<usize>,
    /// Tensors it needs only while it runs.
    pub scratch: Vec<usize>,
}

/// Where every tensor of a graph lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arena {
    /// The arena's size in bytes.
    pub size: u64,
    /// No plan is smaller (the most bytes live at one step).
    pub lower_bound: u64,
    /// Each tensor's byte offset, in tensor order.
    pub offsets: Vec<u64>,
}

/// Plans `graph` into one arena: lifetimes from the op order, then memplan's `auto` solver (the
/// best of its heuristics, improved by a bounded exact search), checked by `validate`.
pub fn plan(graph: &Graph) -> Result<Arena, String> {
    let ops: Vec<OpTensors<'_>> = graph
        .nodes
        .iter()
        .map(|node| OpTensors {
            inputs: &node.inputs,
            outputs: &node.outputs,
            scratch: &node.scratch,
        })
        .collect();
    let schedule = Schedule {
        tensors: graph.tensors.len(),
        inputs: &graph.inputs,
        outputs: &graph.outputs,
        ops: &ops,
    };
    let lifetimes = derive_lifetimes(&schedule).map_err(|e| e.to_string())?;
    let buffers = graph
        .tensors
        .iter()
        .zip(&lifetimes)
        .map(|(&(name, size), life)| Buffer::new(name, size, life.start, life.end))
        .collect();
    let problem = Problem::new(buffers).map_err(|e| e.to_string())?;
    let options = SolveOptions {
        solver: Solver::Auto,
        ..SolveOptions::default()
    };
    let solution = solve(&problem, &options).map_err(|e| e.to_string())?;
    // `solve` already checked it; an engine may check again, in O(n log n).
    assert!(validate(&problem, &solution.plan).is_empty());
    Ok(Arena {
        size: solution.plan.arena_size,
        lower_bound: lower_bound(&problem),
        offsets: solution.plan.offsets,
    })
}
