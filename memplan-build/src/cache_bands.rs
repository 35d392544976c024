//! Bands for the cache: chains of convolutions run band by band where a tensor between them is
//! larger than the data cache, so that it never leaves the cache.
//!
//! A convolution writes its whole output before the next one reads any of it. When that output
//! is larger than the cache (a MobileNet's 96 channels at 112 x 112 are 4.8 MB), every byte of
//! it goes out to memory and comes back, a large part of a pointwise or depthwise
//! convolution's time on a host (MobileNetV2 ran 6-8% faster with that one tensor banded, on a
//! core of 2 MiB of L2). Run band by band ([`crate::patches`],
//! the machinery a RAM budget uses), the tensor between the two lives as a band buffer of a few
//! rows, written and read again while it is still in the cache; every row is computed once, by
//! the same kernels in the same order, so the bytes are the whole-tensor run's.
//!
//! [`Network::cache_bytes`](crate::Network::cache_bytes) asks for it. [`stages`] picks, in
//! each chain ([`patches::chains`]), the runs of convolutions whose outputs between them are
//! larger than the cache (two to [`MAX_STAGE`] nodes a stage), and for each the tallest band
//! whose band buffers take at most half of it (the other half for the rows a band reads and
//! writes whole, and the weights). A network whose tensors all fit the cache keeps its plan.
//!
//! ```text
//!  whole tensors:  expand -> [96 x 112 x 112: 4.8 MB, out to memory and back] -> depthwise
//!  band by band:   expand -> [the few rows of 96 x 112 a band reads: in cache] -> depthwise
//! ```

use std::ops::Range;

use memplan_core::Model;

use crate::graph::{Constant, Node};
use crate::patches::{self, Rows, Stage};
use crate::ram_budget::MAX_STAGE;
use crate::specialise;

/// The stages that keep the tensors between `chains`' convolutions in a cache of `bytes`: each
/// run of a chain whose outputs (but the last's) are larger than `bytes`, with the tallest band
/// whose band buffers take at most `bytes / 2`. None where no band that small exists.
pub(crate) fn stages(
    model: &Model,
    shapes: &[Vec<u64>],
    nodes: &[Node],
    constants: &[Constant],
    chains: &[Range<usize>],
    bytes: u64,
) -> Vec<Stage> {
    let operands = specialise::operands(model, shapes, constants);
    let mut stages = Vec::new();
    for chain in chains {
        let layers: Option<Vec<Rows>> = chain
            .clone()
            .map(|k| patches::layer_rows(model, shapes, constants, &operands, &nodes[k]))
            .collect();
        let Some(layers) = layers else {
            continue;
        };
        // Bytes of each node's output, and of one of its rows.
        let output = |k: usize| {
            nodes[k]
                .outputs
                .first()
                .map_or(0, |&t| model.tensors[t].size)
        };
        let larger = |k: usize| output(k) > bytes;
        let mut start = chain.start;
        while start + 1 < chain.end {
            if !larger(start) {
                start += 1;
                continue;
            }
            // The node after each larger output joins the stage.
            let mut end = start + 2;
            while end < chain.end && end - start < MAX_STAGE && larger(end - 1) {
                end += 1;
            }
            let run = &layers[start - chain.start..end - chain.start];
            let row_bytes: Vec<u64> = (start..end - 1)
                .zip(run)
                .map(|(k, layer)| output(k).div_ceil(layer.output.max(1) as u64))
                .collect();
            if let Some(band) = tallest_band(run, &row_bytes, bytes / 2) {
                stages.push(Stage {
                    nodes: start..end,
                    band,
                });
            }
            start = end;
        }
    }
    stages
}

/// The tallest band of the last layer's output rows, spread evenly over the rows, whose band
/// buffers (the rows [`patches::simulate`] says each holds, `row_bytes` each) take at most
/// `room` bytes; `None` if one row's do not fit or the whole output does (nothing to gain).
fn tallest_band(layers: &[Rows], row_bytes: &[u64], room: u64) -> Option<usize> {
    let rows = layers.last()?.output;
    let fits = |band: usize| {
        patches::simulate(layers, band).is_some_and(|(_, capacity)| {
            let held: u64 = capacity
                .iter()
                .zip(row_bytes)
                .map(|(&r, &b)| (r as u64).saturating_mul(b))
                .sum();
            held <= room
        })
    };
    // The buffers grow with the band: the tallest that fits, found by halving the range.
    let (mut lo, mut hi) = (0, rows);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    if lo == 0 || lo >= rows {
        return None;
    }
    // As many bands, of equal heights but the last: no last band of a row or two.
    Some(rows.div_ceil(rows.div_ceil(lo)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A layer of `input` rows to `output` rows through a window of `kernel` rows, `stride`,
    /// padding `pad` above.
    fn layer(input: usize, output: usize, kernel: usize, stride: usize, pad: usize) -> Rows {
        Rows {
            input,
            output,
            window: [kernel, stride, 1, pad],
        }
    }

    /// A pointwise expansion then a 3x3 stride-2 depthwise: the band takes as many rows as
    /// half the cache holds, spread evenly, and the buffers of the band chosen fit while one
    /// row more would not.
    #[test]
    fn the_tallest_band_whose_buffers_fit() {
        let layers = [layer(112, 112, 1, 1, 0), layer(112, 56, 3, 2, 1)];
        let row = 96 * 112 * 4;
        let band = tallest_band(&layers, &[row], 512 * 1024).expect("a band fits");
        let held = |band: usize| patches::simulate(&layers, band).expect("simulated").1[0] as u64;
        assert!(held(band) * row <= 512 * 1024, "band {band} holds too much");
        assert!((4..56).contains(&band), "band {band}");
        // No room for a row: no stage; room for the whole tensor: nothing to gain.
        assert_eq!(tallest_band(&layers, &[row], row), None);
        assert_eq!(tallest_band(&layers, &[row], 200 * row), None);
    }

    /// Bands are spread evenly: 56 rows in bands of at most 12 are 5 bands of 12 but the last.
    #[test]
    fn bands_are_spread_evenly() {
        let layers = [layer(56, 56, 1, 1, 0), layer(56, 56, 1, 1, 0)];
        // Each output row holds one row of the buffer: 12 rows fit, 13 do not.
        let band = tallest_band(&layers, &[10], 125).expect("a band fits");
        assert_eq!(band, 12);
        let band = tallest_band(&layers, &[10], 145).expect("a band fits");
        // 14 rows fit: 4 bands of 14.
        assert_eq!(band, 14);
    }
}
