//! The embedded planner plans a graph at load time: every tensor gets an offset, tensors live at
//! the same step never overlap, and the arena reaches the lower bound where it can.

use memplan_example_embed_planner::{Graph, Node, plan};

fn node(inputs: &[usize], outputs: &[usize], scratch: &[usize]) -> Node {
    Node {
        inputs: inputs.to_vec(),
        outputs: outputs.to_vec(),
        scratch: scratch.to_vec(),
    }
}

/// A residual block: `x -> a -> b`, then `add(x, b) -> y`, with a scratch buffer in `a`.
fn residual() -> Graph {
    Graph {
        tensors: vec![
            ("x", 4096),
            ("a", 8192),
            ("a_scratch", 512),
            ("b", 4096),
            ("y", 4096),
        ],
        inputs: vec![0],
        outputs: vec![4],
        nodes: vec![
            node(&[0], &[1], &[2]),
            node(&[1], &[3], &[]),
            node(&[0, 3], &[4], &[]),
        ],
    }
}

#[test]
fn a_residual_block_is_planned_at_its_lower_bound() {
    let graph = residual();
    let arena = plan(&graph).unwrap();
    assert_eq!(arena.offsets.len(), graph.tensors.len());
    // Step 0: x, a and a's scratch; step 1: x, a, b; step 2: x, b, y.
    assert_eq!(arena.lower_bound, 4096 + 8192 + 4096);
    assert_eq!(arena.size, arena.lower_bound);
    // x is live throughout, so nothing else may overlap it.
    let (x, x_end) = (arena.offsets[0], arena.offsets[0] + 4096);
    for (i, &(_, size)) in graph.tensors.iter().enumerate().skip(1) {
        let (start, end) = (arena.offsets[i], arena.offsets[i] + size);
        assert!(end <= x || start >= x_end, "tensor {i} overlaps x");
        assert!(end <= arena.size);
    }
}

#[test]
fn a_long_chain_reuses_two_slots() {
    // t0 -> t1 -> ... -> t99: each op reads the previous tensor only, so two slots suffice.
    let names: Vec<&'static str> = (0..100)
        .map(|i| &*Box::leak(format!("t{i}").into_boxed_str()))
        .collect();
    let graph = Graph {
        tensors: names.iter().map(|&n| (n, 1000)).collect(),
        inputs: vec![0],
        outputs: vec![99],
        nodes: (0..99).map(|i| node(&[i], &[i + 1], &[])).collect(),
    };
    let arena = plan(&graph).unwrap();
    assert_eq!(arena.size, 2000);
}

#[test]
fn a_graph_that_reads_before_writing_is_an_error() {
    let graph = Graph {
        tensors: vec![("x", 16), ("y", 16)],
        inputs: vec![],
        outputs: vec![1],
        nodes: vec![node(&[0], &[1], &[])],
    };
    assert_eq!(
        plan(&graph).unwrap_err(),
        "op 0 reads tensor 0 before it is produced"
    );
}
