//! The smallest use of `memplan!`.
memplan::memplan!("models/tiny.toml");

fn main() {
    let mut arena = tiny::Arena::new();
    arena.input().copy_from_slice(&[1.0, 2.0, 3.0, 4.0]);
    let views = arena.op_dense1();
    for (i, h) in views.hidden.iter_mut().enumerate() {
        *h = views.input.iter().sum::<f32>() * i as f32;
    }
    println!(
        "arena {} bytes, lower bound {}",
        tiny::ARENA_SIZE,
        tiny::LOWER_BOUND
    );
    for p in tiny::TENSORS {
        println!("{p:?}");
    }
}
