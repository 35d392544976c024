//! A real network imported from ONNX and planned at compile time.
//!
//! `examples/models/mobilenet_v2.toml` was written by
//! `memplan import ../shared/bench/models/mobilenet_v2.graph.onnx -o examples/models/mobilenet_v2.toml`:
//! 101 activation tensors and 100 ops (the 109 constant nodes folded away), each op keeping its
//! ONNX `op_type` as `kind`, so `Clip`, `Add` and the like may run in place. The arena (9 MiB)
//! is too large for the stack, so it lives in a `static`, handed out once.
//!
//! Run: `cargo run --example imported_mobilenet_v2`.

memplan::memplan!("models/mobilenet_v2.toml");

use mobilenet_v2 as model;

static ARENA: memplan::StaticArena<model::Arena> = memplan::StaticArena::new(model::Arena::new());

/// Fills the input image and runs the first convolution's view (a stand-in for the real kernel):
/// the op view hands out the input shared and the output mutable, planned to be disjoint.
fn first_op(arena: &mut model::Arena) -> (usize, usize) {
    arena.input().fill(0.5);
    let views = arena.op_features_features_0_features_0_0_conv();
    let (input, output) = (
        views.input,
        views.features_features_0_features_0_0_conv_output_0,
    );
    let mean = input.iter().sum::<f32>() / input.len() as f32;
    output.fill(mean);
    (input.len(), output.len())
}

fn main() {
    let arena = ARENA.take().expect("the arena is taken once");
    let (input, output) = first_op(arena);
    println!(
        "mobilenet_v2: {} tensors over {} steps; arena {} bytes (lower bound {}), aligned to {}",
        model::TENSORS.len(),
        model::STEPS,
        model::ARENA_SIZE,
        model::LOWER_BOUND,
        model::ARENA_ALIGN
    );
    println!("first op read {input} input elements and wrote {output} output elements");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_imported_plan_is_sound() {
        assert_eq!(model::TENSORS.len(), 101);
        assert_eq!(model::STEPS, 100);
        assert_eq!(core::mem::size_of::<model::Arena>(), model::ARENA_SIZE);
        assert_eq!(core::mem::align_of::<model::Arena>(), model::ARENA_ALIGN);
        const { assert!(model::ARENA_SIZE >= model::LOWER_BOUND) };
        for t in model::TENSORS {
            assert!(t.offset + t.size <= model::ARENA_SIZE, "{}", t.name);
            assert_eq!(
                t.offset % 16,
                0,
                "{} is aligned to the model's 16 bytes",
                t.name
            );
        }
        // Too large for a test thread's stack: the `static` it is.
        let arena = ARENA.take().expect("only this test takes it");
        assert_eq!(first_op(arena), (3 * 224 * 224, 32 * 112 * 112));
    }
}
