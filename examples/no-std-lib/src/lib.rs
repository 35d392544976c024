//! A `#![no_std]` library using `memplan!`: a three-layer perceptron whose activations live in an
//! arena planned at compile time. No `std`, no `alloc`, no `unsafe`.
//!
//! The plan is checked at compile time too: [`memplan::check_plan`] is a `const fn`.
#![no_std]

memplan::memplan!("../model.toml");

const _: () = {
    assert!(matches!(
        memplan::check_plan(mlp::TENSORS, mlp::ARENA_SIZE),
        Ok(())
    ));
    assert!(mlp::ARENA_SIZE >= mlp::LOWER_BOUND);
};

/// Deterministic weights for a `rows x cols` layer, in `[-0.5, 0.5)`.
const fn weights<const N: usize>(seed: u32) -> [f32; N] {
    let mut out = [0.0; N];
    let mut state = seed;
    let mut i = 0;
    while i < N {
        state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        out[i] = (state >> 8) as f32 / (1u32 << 24) as f32 - 0.5;
        i += 1;
    }
    out
}

const W1: [f32; 8 * 32] = weights(11);
const W2: [f32; 32 * 16] = weights(12);
const W3: [f32; 16 * 4] = weights(13);

fn dense(input: &[f32], weights: &[f32], output: &mut [f32]) {
    for (o, out) in output.iter_mut().enumerate() {
        let row = &weights[o * input.len()..(o + 1) * input.len()];
        *out = row.iter().zip(input).map(|(w, x)| w * x).sum();
    }
}

/// ReLU in place: `Relu` may write over its input, so its view holds the input on entry.
fn relu(values: &mut [f32]) {
    for v in values {
        if *v < 0.0 {
            *v = 0.0;
        }
    }
}

/// The arena type, for callers that keep one in a `static`.
pub use mlp::Arena;

/// Runs the network on `x` in `arena`; returns the four scores and the index of the largest.
pub fn classify(arena: &mut Arena, x: &[f32; 8]) -> ([f32; 4], u8) {
    arena.x().copy_from_slice(x);
    let v = arena.op_fc1();
    dense(v.x, &W1, v.h1);
    let v = arena.op_relu1();
    relu(v.a1); // in place: `a1` is `h1`'s memory
    let v = arena.op_fc2();
    dense(v.a1, &W2, v.h2);
    let v = arena.op_relu2();
    relu(v.a2);
    let v = arena.op_fc3();
    dense(v.a2, &W3, v.y);
    let mut best = 0;
    for (i, &score) in v.y.iter().enumerate() {
        if score > v.y[best] {
            best = i;
        }
    }
    v.labels[0] = best as u8;
    let mut scores = [0.0; 4];
    scores.copy_from_slice(v.y);
    (scores, v.labels[0])
}

/// The arena's size in bytes, for a linker script or a start-up log.
pub const ARENA_BYTES: usize = mlp::ARENA_SIZE;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_without_allocating() {
        let mut arena = Arena::new();
        let (scores, label) = classify(&mut arena, &[1.0, -1.0, 0.5, 0.25, 0.0, 2.0, -0.5, 1.5]);
        let top = scores.iter().copied().fold(f32::MIN, f32::max);
        assert_eq!(scores[label as usize], top);
        // Running twice in the same arena gives the same answer: no state leaks between runs.
        assert_eq!(
            classify(&mut arena, &[1.0, -1.0, 0.5, 0.25, 0.0, 2.0, -0.5, 1.5]),
            (scores, label)
        );
        const { assert!(ARENA_BYTES <= 1024) };
    }
}
