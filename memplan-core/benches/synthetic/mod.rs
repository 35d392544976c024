//! A synthetic model file of `n` tensors, shaped like a deep residual network: a chain of ops,
//! each reading the previous activation, every fourth op also a skip connection from three steps
//! back, every eighth op with a scratch tensor. Sizes vary deterministically (no randomness).

use std::fmt::Write;

/// The model file's text.
pub(crate) fn model_text(n: usize) -> String {
    assert!(n >= 2, "at least an input and an output");
    let mut text = String::new();
    // Tensor t0 is the input; ops produce t1.. in order, plus scratch tensors s<k>.
    let mut scratch = Vec::new();
    let mut tensors = 1;
    let mut op = 1;
    let mut ops = String::new();
    let _ = writeln!(text, "t0 = {{ dtype = \"f32\", shape = [1, 16, 32, 32] }}");
    while tensors < n {
        let channels = 8 * (1 + (op * 7) % 8);
        let side = [8, 16, 32][op % 3];
        let _ = writeln!(
            text,
            "t{op} = {{ dtype = \"f32\", shape = [1, {channels}, {side}, {side}] }}"
        );
        tensors += 1;
        let mut inputs = format!("\"t{}\"", op - 1);
        if op % 4 == 0 && op >= 3 {
            let _ = write!(inputs, ", \"t{}\"", op - 3);
        }
        let _ = write!(
            ops,
            "\n[[ops]]\nname = \"op{op}\"\nkind = \"Conv\"\ninputs = [{inputs}]\noutputs = [\"t{op}\"]\n"
        );
        if op % 8 == 0 && tensors < n - 1 {
            scratch.push(op);
            let _ = writeln!(ops, "scratch = [\"s{op}\"]");
            tensors += 1;
        }
        op += 1;
    }
    let header = format!(
        "[model]\nname = \"synthetic\"\nalignment = 64\ninputs = [\"t0\"]\noutputs = [\"t{}\"]\n\n[tensors]\n",
        op - 1
    );
    for s in scratch {
        let _ = writeln!(text, "s{s} = {{ bytes = {} }}", 4096 * (1 + s % 5));
    }
    header + &text + &ops
}
