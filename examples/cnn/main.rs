//! A small residual CNN whose every activation lives in one arena planned at compile time.
//!
//! `memplan!("model.toml")` below reads the model next to this file, plans the arena while the
//! crate compiles, and generates `mod cnn` with the `Arena` type. Each layer runs on the views its
//! op method hands out; nothing is allocated. Run it with `cargo run --example cnn`.

mod kernels;
#[cfg(test)]
mod reference;
mod weights;

memplan::memplan!("model.toml");

use weights::*;

/// Runs the network on `image` in `arena` and returns the class probabilities (a view into the
/// arena).
fn infer<'a>(arena: &'a mut cnn::Arena, image: &[f32]) -> &'a mut [f32] {
    arena.input().copy_from_slice(image);
    let v = arena.op_conv1();
    kernels::conv3x3(v.input, 1, 16, 16, &CONV1_W, &CONV1_B, v.c1);
    let v = arena.op_relu1();
    kernels::relu_in_place(v.r1); // `r1` is `c1`'s memory: Relu runs in place
    let v = arena.op_pool1();
    kernels::pool2x2(v.r1, 8, 16, 16, true, v.p1);
    let v = arena.op_conv2();
    kernels::conv3x3_im2col(v.p1, 8, 8, 8, &CONV2_W, &CONV2_B, v.cols, v.c2);
    let v = arena.op_relu2();
    kernels::relu_in_place(v.r2);
    let v = arena.op_conv3();
    kernels::conv3x3(v.r2, 8, 8, 8, &CONV3_W, &CONV3_B, v.c3);
    let v = arena.op_add();
    kernels::add_in_place(v.sum, v.p1); // `sum` starts as `c3`
    let v = arena.op_relu3();
    kernels::relu_in_place(v.r3);
    let v = arena.op_pool2();
    kernels::pool2x2(v.r3, 8, 8, 8, false, v.p2);
    let v = arena.op_dense();
    kernels::dense(v.p2, &DENSE_W, &DENSE_B, v.logits);
    let v = arena.op_softmax();
    kernels::softmax(v.logits, v.probs);
    arena.probs()
}

/// The arena lives in a static: no stack, no heap.
static ARENA: std::sync::Mutex<cnn::Arena> = std::sync::Mutex::new(cnn::Arena::new());

fn main() {
    println!("memory plan of `cnn` (planned at compile time):");
    println!(
        "{:>8} {:>8} {:>8}  {:<10} tensor",
        "offset", "bytes", "end", "steps"
    );
    for t in cnn::TENSORS {
        let steps = format!("[{}, {})", t.start, t.end);
        println!(
            "{:>8} {:>8} {:>8}  {steps:<10} {}",
            t.offset,
            t.size,
            t.offset + t.size,
            t.name
        );
    }
    let no_reuse: usize = cnn::TENSORS.iter().map(|t| t.size).sum();
    println!(
        "arena: {} bytes (align {}); lower bound: {} bytes; without reuse: {} bytes ({:.1}x the arena)",
        cnn::ARENA_SIZE,
        cnn::ARENA_ALIGN,
        cnn::LOWER_BOUND,
        no_reuse,
        no_reuse as f64 / cnn::ARENA_SIZE as f64
    );

    let mut arena = ARENA
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let probs = infer(&mut arena, &ring_image());
    let (class, p) =
        probs.iter().enumerate().fold(
            (0, f32::MIN),
            |best, (i, &p)| if p > best.1 { (i, p) } else { best },
        );
    println!("probabilities: {probs:.4?}");
    println!("predicted class: {class} (p = {p:.4})");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_arena_network_matches_the_heap_reference() {
        let images = [
            ring_image(),
            std::array::from_fn(|i| ((i * 37) % 11) as f32 / 10.0),
            [0.5; 256],
        ];
        let mut arena = Box::new(cnn::Arena::new());
        for image in images {
            let expected = reference::infer(&image);
            let actual = infer(&mut arena, &image);
            assert_eq!(actual.len(), 10);
            for (a, e) in actual.iter().zip(&expected) {
                assert!(
                    (a - e).abs() <= 1e-5,
                    "arena {actual:?}\nheap  {expected:?}"
                );
            }
            assert!((actual.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        }
    }

    #[test]
    fn the_plan_validates_and_reuses_memory() {
        assert_eq!(memplan::check_plan(cnn::TENSORS, cnn::ARENA_SIZE), Ok(()));
        const { assert!(cnn::ARENA_SIZE >= cnn::LOWER_BOUND) };
        assert_eq!(cnn::TENSORS.len(), 13);
        let no_reuse: usize = cnn::TENSORS.iter().map(|t| t.size).sum();
        assert!(
            cnn::ARENA_SIZE < no_reuse / 2,
            "{} vs {no_reuse}",
            cnn::ARENA_SIZE
        );
        const { assert!(cnn::ARENA_SIZE <= 64 * 1024, "within the model's budget") };
    }

    #[test]
    fn the_residual_input_survives_until_the_add() {
        let p1 = cnn::TENSORS.iter().find(|t| t.name == "p1").unwrap();
        assert_eq!((p1.start, p1.end), (2, 7));
    }
}
