//! A user's crate: the arena of `model.toml`, planned when this crate compiles.
#![no_std]

memplan::memplan!("../model.toml");

/// Runs the last op on `logits` and returns the label: enough to show the views work.
pub fn pick(arena: &mut kws::Arena, logits: &[f32; 12]) -> i64 {
    arena.logits().copy_from_slice(logits);
    let v = arena.op_softmax();
    let mut best = 0;
    for (i, (&l, s)) in v.logits.iter().zip(v.scores.iter_mut()).enumerate() {
        *s = l;
        if l > v.logits[best] {
            best = i;
        }
    }
    v.label[0] = best as i64;
    v.label[0]
}
