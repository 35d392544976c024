//! The views of op `k` by index, for an interpreter that loops over `OPS`.
//!
//! `op_<name>()` hands out one op's views as named fields; an interpreter does not know the names
//! at compile time, only the index `k`. `Arena::views(k)` (or `Arenas::views(k)` with pools)
//! cuts the arena with the op's precomputed [`Cut`] table, in offset order, with
//! `split_at_mut`: one split per view, nothing allocated, nothing searched. The pieces are
//! disjoint by construction (each split hands its left part out and keeps cutting the right),
//! so the borrow checker's guarantee is the same as `op_<name>()`'s: as long as the `Views`
//! lives, the arena is mutably borrowed, and no byte is handed out twice.

use crate::tables::Cut;

/// All arena views of one op, cut from the arena(s), taken one at a time by tensor index.
///
/// `N` is the generated `MAX_VIEWS` (the most views any op of the model has). A view is taken
/// at most once: a second take of the same tensor (or of the other tensor of an in-place pair)
/// gives `None`, so two takes never alias.
pub struct Views<'a, const N: usize> {
    pieces: [&'a mut [u8]; N],
    cuts: &'static [Cut],
}

impl<'a, const N: usize> Views<'a, N> {
    /// Cuts `cuts` out of the pools' bytes: `None` if a cut runs past its pool or there are more
    /// than `N` (never, for a generated table and its own arena).
    pub(crate) fn cut<const P: usize>(
        pools: [&'a mut [u8]; P],
        cuts: &'static [Cut],
    ) -> Option<Self> {
        if cuts.len() > N {
            return None;
        }
        let mut rest = pools;
        let mut pieces: [&'a mut [u8]; N] = core::array::from_fn(|_| <&mut [u8]>::default());
        for (slot, cut) in pieces.iter_mut().zip(cuts) {
            let pool = rest.get_mut(cut.pool)?;
            let bytes = core::mem::take(pool);
            let (_, tail) = bytes.split_at_mut_checked(cut.gap)?;
            let (piece, tail) = tail.split_at_mut_checked(cut.size)?;
            *pool = tail;
            *slot = piece;
        }
        Some(Self { pieces, cuts })
    }

    /// Number of arena views of the op (external tensors are not among them).
    pub fn len(&self) -> usize {
        self.cuts.len()
    }

    /// Whether the op has no arena view.
    pub fn is_empty(&self) -> bool {
        self.cuts.is_empty()
    }

    fn slot(&self, tensor: usize) -> Option<usize> {
        self.cuts
            .iter()
            .position(|c| c.tensor == tensor || c.absorbs == Some(tensor))
    }

    /// The bytes of `tensor` (an index into `TENSOR_INFO`), taken out: `None` if it is not an
    /// arena tensor of this op or was already taken.
    pub fn take_bytes(&mut self, tensor: usize) -> Option<&'a mut [u8]> {
        let slot = self.slot(tensor)?;
        let piece = core::mem::take(&mut self.pieces[slot]);
        (!piece.is_empty()).then_some(piece)
    }

    /// `tensor` as mutable elements (an output, scratch, or an in-place pair), taken out.
    /// `None` as for [`Views::take_bytes`], or if `T` does not fit its bytes.
    pub fn output<T: bytemuck::Pod>(&mut self, tensor: usize) -> Option<&'a mut [T]> {
        bytemuck::try_cast_slice_mut(self.take_bytes(tensor)?).ok()
    }

    /// `tensor` as shared elements (an input), taken out.
    pub fn input<T: bytemuck::Pod>(&mut self, tensor: usize) -> Option<&'a [T]> {
        self.output(tensor).map(|s| &*s)
    }
}
