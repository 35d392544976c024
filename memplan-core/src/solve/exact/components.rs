//! Splitting a problem at time cuts: where no buffer is live across a step, the buffers before
//! and after it never meet, so each side packs on its own.

use crate::model::Problem;

/// The buffers of each independent part, in time order of the parts; within a part, by index.
///
/// A cut falls before a step when every buffer that starts earlier has ended by then. Pinned
/// buffers count like any other.
///
/// # Runtime
/// `O(n log n)`.
pub(crate) fn split_at_time_cuts(problem: &Problem) -> Vec<Vec<usize>> {
    let buffers = problem.buffers();
    let mut order: Vec<usize> = (0..buffers.len()).collect();
    order.sort_by_key(|&i| (buffers[i].lifetime.start, i));
    let mut parts: Vec<Vec<usize>> = Vec::new();
    let mut reach = 0u64; // the latest end among buffers of the current part
    for i in order {
        let lifetime = buffers[i].lifetime;
        match parts.last_mut() {
            Some(part) if lifetime.start < reach => part.push(i),
            _ => parts.push(vec![i]),
        }
        reach = reach.max(lifetime.end);
    }
    for part in &mut parts {
        part.sort_unstable();
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Buffer;

    #[test]
    fn splits_where_nothing_is_live_across() {
        let p = Problem::new(vec![
            Buffer::new("a", 1, 0, 2),
            Buffer::new("b", 1, 1, 3),
            Buffer::new("c", 1, 3, 4), // touches b's end: a new part
            Buffer::new("d", 1, 5, 9),
            Buffer::new("e", 1, 6, 7),
        ])
        .unwrap();
        assert_eq!(
            split_at_time_cuts(&p),
            vec![vec![0, 1], vec![2], vec![3, 4]]
        );
    }

    #[test]
    fn one_long_buffer_joins_everything() {
        let p = Problem::new(vec![
            Buffer::new("a", 1, 0, 2),
            Buffer::new("long", 1, 0, 10),
            Buffer::new("c", 1, 5, 6),
        ])
        .unwrap();
        assert_eq!(split_at_time_cuts(&p), vec![vec![0, 1, 2]]);
    }
}
