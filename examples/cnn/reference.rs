//! The same network written plainly: every layer allocates its result on the heap, convolutions
//! are direct (no im2col), indices go through a small tensor type. Only for checking the arena
//! version.

/// A `c x h x w` tensor on the heap.
#[derive(Clone, Debug)]
pub(crate) struct Tensor {
    pub(crate) c: usize,
    pub(crate) h: usize,
    pub(crate) w: usize,
    pub(crate) data: Vec<f32>,
}

impl Tensor {
    fn zeros(c: usize, h: usize, w: usize) -> Self {
        Self {
            c,
            h,
            w,
            data: vec![0.0; c * h * w],
        }
    }
    fn at(&self, c: usize, y: isize, x: isize) -> f32 {
        if y < 0 || x < 0 || y >= self.h as isize || x >= self.w as isize {
            return 0.0;
        }
        self.data[(c * self.h + y as usize) * self.w + x as usize]
    }
    fn set(&mut self, c: usize, y: usize, x: usize, value: f32) {
        let (h, w) = (self.h, self.w);
        self.data[(c * h + y) * w + x] = value;
    }
}

fn conv(input: &Tensor, weights: &[f32], bias: &[f32]) -> Tensor {
    let mut out = Tensor::zeros(bias.len(), input.h, input.w);
    for o in 0..bias.len() {
        for y in 0..input.h {
            for x in 0..input.w {
                let mut acc = bias[o];
                for i in 0..input.c {
                    for ky in 0..3 {
                        for kx in 0..3 {
                            let weight = weights[o * input.c * 9 + i * 9 + ky * 3 + kx];
                            acc += weight
                                * input.at(
                                    i,
                                    y as isize + ky as isize - 1,
                                    x as isize + kx as isize - 1,
                                );
                        }
                    }
                }
                out.set(o, y, x, acc);
            }
        }
    }
    out
}

fn relu(t: &Tensor) -> Tensor {
    Tensor {
        data: t
            .data
            .iter()
            .map(|&v| if v > 0.0 { v } else { 0.0 })
            .collect(),
        ..t.clone()
    }
}

fn pool(t: &Tensor, max: bool) -> Tensor {
    let mut out = Tensor::zeros(t.c, t.h / 2, t.w / 2);
    for c in 0..t.c {
        for y in 0..t.h / 2 {
            for x in 0..t.w / 2 {
                let window: Vec<f32> = (0..4)
                    .map(|k| t.at(c, (2 * y + k / 2) as isize, (2 * x + k % 2) as isize))
                    .collect();
                let value = if max {
                    window.iter().copied().fold(f32::MIN, f32::max)
                } else {
                    window.iter().sum::<f32>() / 4.0
                };
                out.set(c, y, x, value);
            }
        }
    }
    out
}

/// Runs the network on a 16x16 image and returns the ten class probabilities.
pub(crate) fn infer(image: &[f32]) -> Vec<f32> {
    use super::weights::*;
    let input = Tensor {
        c: 1,
        h: 16,
        w: 16,
        data: image.to_vec(),
    };
    let p1 = pool(&relu(&conv(&input, &CONV1_W, &CONV1_B)), true);
    let c3 = conv(&relu(&conv(&p1, &CONV2_W, &CONV2_B)), &CONV3_W, &CONV3_B);
    let sum = Tensor {
        data: c3.data.iter().zip(&p1.data).map(|(a, b)| a + b).collect(),
        ..c3
    };
    let p2 = pool(&relu(&sum), false);
    let logits: Vec<f32> = (0..10)
        .map(|o| {
            DENSE_B[o]
                + (0..p2.data.len())
                    .map(|i| DENSE_W[o * 128 + i] * p2.data[i])
                    .sum::<f32>()
        })
        .collect();
    let top = logits.iter().copied().fold(f32::MIN, f32::max);
    let exps: Vec<f32> = logits.iter().map(|l| (l - top).exp()).collect();
    let total: f32 = exps.iter().sum();
    exps.iter().map(|e| e / total).collect()
}
