//! Writing a sliding-window operator's output over its own input, row by row.
//!
//! A convolution reads a band of input rows for each output row, so the output cannot simply go
//! where the input is: output row `r` covers bytes that later rows still read. But the rows a
//! later row reads move down as the output does, and (when the output is no larger than the
//! input) the output's bytes stay behind the input's. So each output row is computed into a
//! small ring and copied over the input as soon as no later row reads the bytes it covers; the
//! ring holds the rows between. For a 3 x 3 window with stride 1 and one row of padding, two
//! rows; for a stride of 2, one.
//!
//! ```text
//!  input rows   0 1 2 3 4 5        output row 3 computed from input rows 2..=4
//!  output rows  0 1 2 . . .        rows 0..=1 written over input rows 0..=1 (no longer read)
//!  ring               2 3          row 2 held back: input row 2 is still read by row 3
//! ```

/// The rows of one image as the overwrite sees them: `[rows, bytes a row]` of input and output,
/// the vertical stride and the padding above.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Overwrite {
    input: [usize; 2],
    output: [usize; 2],
    stride: usize,
    pad: usize,
}

impl Overwrite {
    /// The overwrite of an image of `input` `[rows, bytes a row]` by one of `output`, or `None`
    /// when the output is larger (its bytes would run ahead of the input's) or the sizes
    /// overflow.
    pub(crate) fn new(
        input: [usize; 2],
        output: [usize; 2],
        stride: usize,
        pad: usize,
    ) -> Option<Self> {
        let (in_bytes, out_bytes) = (
            input[0].checked_mul(input[1])?,
            output[0].checked_mul(output[1])?,
        );
        (out_bytes <= in_bytes && stride > 0).then_some(Self {
            input,
            output,
            stride,
            pad,
        })
    }

    /// After output row `done` is computed and rows `..flushed` are written, the next row that
    /// may be written over the input, if any: one no later output row reads the bytes of.
    pub(crate) fn flushable(&self, done: usize, flushed: usize) -> Option<usize> {
        if flushed > done {
            return None;
        }
        // The first input row any later output row reads (none: the whole image is free).
        let next = done + 1;
        let needed = if next < self.output[0] {
            (next * self.stride)
                .saturating_sub(self.pad)
                .min(self.input[0])
        } else {
            self.input[0]
        };
        ((flushed + 1) * self.output[1] <= needed * self.input[1]).then_some(flushed)
    }

    /// Runs one image's output rows over its input: `row(oy, image, slot)` computes output row
    /// `oy` into `slot` (one row of `ring`, which holds [`Overwrite::held_rows`] rows) from
    /// `image`, the image's input at `data[at[0]..]`; each row goes to `data[at[1]..]` (at or
    /// before the input) once no later row reads the input it covers. `row`'s error stops it.
    pub(crate) fn rows_over<T: Copy, E>(
        &self,
        data: &mut [T],
        at: [usize; 2],
        ring: &mut [T],
        mut row: impl FnMut(usize, &[T], &mut [T]) -> Result<(), E>,
    ) -> Result<(), E> {
        let (held, len) = (self.held_rows().max(1), self.output[1]);
        let image = self.input[0] * self.input[1];
        let mut flushed = 0;
        for oy in 0..self.output[0] {
            let slot = &mut ring[(oy % held) * len..][..len];
            row(oy, &data[at[0]..at[0] + image], slot)?;
            // Rows whose bytes no later row of this image reads go over the input.
            while let Some(f) = self.flushable(oy, flushed) {
                data[at[1] + f * len..][..len].copy_from_slice(&ring[(f % held) * len..][..len]);
                flushed += 1;
            }
        }
        Ok(())
    }

    /// The most output rows held at once: computed and not yet written over the input.
    pub(crate) fn held_rows(&self) -> usize {
        let mut held = 0;
        let mut flushed = 0;
        for done in 0..self.output[0] {
            held = held.max(done + 1 - flushed);
            while self.flushable(done, flushed).is_some() {
                flushed += 1;
            }
        }
        held
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_three_by_three_window_holds_two_rows_a_stride_of_two_one() {
        // 3 x 3, stride 1, padding 1: row r is written once row r + 1 is computed.
        let same = Overwrite::new([25, 320], [25, 320], 1, 1).unwrap();
        assert_eq!(same.held_rows(), 2);
        // Stride 2 halves the rows and the row's bytes: each row goes over at once.
        let halved = Overwrite::new([24, 48], [12, 24], 2, 0).unwrap();
        assert_eq!(halved.held_rows(), 1);
        // A 5-row window, padding 2: rows r..=r+2 are read by row r + 1 (it starts at r - 1).
        let five = Overwrite::new([10, 8], [10, 8], 1, 2).unwrap();
        assert_eq!(five.held_rows(), 3);
        // Nothing to write.
        assert_eq!(Overwrite::new([4, 8], [0, 8], 1, 1).unwrap().held_rows(), 0);
    }

    #[test]
    fn an_output_larger_than_its_input_cannot_go_over_it() {
        assert_eq!(Overwrite::new([4, 8], [4, 9], 1, 0), None);
        assert_eq!(Overwrite::new([usize::MAX, 2], [1, 1], 1, 0), None);
    }

    #[test]
    fn every_row_is_written_by_the_end_of_the_image() {
        for (input, output, stride, pad) in [
            ([7, 5], [7, 5], 1, 3),
            ([9, 6], [5, 3], 2, 1),
            ([8, 4], [3, 4], 3, 0),
        ] {
            let rows = Overwrite::new(input, output, stride, pad).unwrap();
            let mut flushed = 0;
            for done in 0..output[0] {
                while let Some(f) = rows.flushable(done, flushed) {
                    // The row written ends before the first input byte a later row reads.
                    let first_read = if done + 1 < output[0] {
                        ((done + 1) * stride).saturating_sub(pad) * input[1]
                    } else {
                        input[0] * input[1]
                    };
                    assert!((f + 1) * output[1] <= first_read);
                    flushed += 1;
                }
                assert!(done + 1 - flushed <= rows.held_rows());
            }
            assert_eq!(flushed, output[0]);
        }
    }
}
