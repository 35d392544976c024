//! Structured fuzzing of the TFLite reader and lowering (issue 36): real models (the runner's
//! LiteRT-checked files and the keyword spotters) with a few fields changed to values a
//! converter never writes (shapes, tensor types, operand indices, quantization, options,
//! constant integers such as pads, axes and permutations), each read by `memplan_tflite::read`
//! and built by `Network::generate` as a build script does, with overflow checks. Every case
//! must be a model or an error, never a panic, and must not hang.
//!
//! The mutations come from a fixed xorshift sequence, so a failure names its case and seed. A
//! small budget runs with the tests; a longer run by hand:
//!
//! ```text
//! MEMPLAN_TFLITE_FUZZ_CASES=20000 MEMPLAN_TFLITE_FUZZ_SEED=7 \
//!     cargo test -p memplan-build --test test_tflite_fuzz -- --nocapture
//! ```
//!
//! (not `--release`: a build script runs with overflow checks, and so must this.)

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use memplan_build::Network;
use memplan_tflite::fixture::FileBuilder;
use memplan_tflite::fixture::schema::{BuiltinOptions, TensorType};

/// Cases run by `cargo test` (override with `MEMPLAN_TFLITE_FUZZ_CASES`).
const DEFAULT_CASES: u64 = 150;

/// A case that takes this long is taken for a hang (the slowest real model builds in 0.5 s).
const HANG: Duration = Duration::from_secs(60);

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    fn pick<T: Copy>(&mut self, values: &[T]) -> T {
        values[self.below(values.len())]
    }

    fn int(&mut self) -> i32 {
        let values = [
            0,
            -1,
            1,
            2,
            3,
            7,
            9,
            256,
            1 << 26,
            1 << 30,
            i32::MAX,
            i32::MIN,
        ];
        if self.below(4) == 0 {
            (self.next() % 64) as i32 - 8
        } else {
            self.pick(&values)
        }
    }

    fn long(&mut self) -> i64 {
        match self.below(5) {
            0 => i64::MIN,
            1 => i64::MAX,
            _ => i64::from(self.int()),
        }
    }

    fn float(&mut self) -> f32 {
        self.pick(&[
            0.0,
            -1.0,
            0.5,
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            1e-30,
            1e30,
        ])
    }
}

fn real_models() -> Vec<(String, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut paths: Vec<PathBuf> =
        std::fs::read_dir(root.join("../memplan-runner/tests/fixtures/tflite"))
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "tflite"))
            .collect();
    for name in ["kws_ref_model.tflite", "kws_ref_model_float32.tflite"] {
        let path = root.join("../../shared/bench/tinyml").join(name);
        if path.is_file() {
            paths.push(path);
        }
    }
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let name = p.file_stem().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect()
}

/// One structured change of `file`; what it changed.
fn mutate(file: &mut FileBuilder, rng: &mut Rng) -> String {
    let tensors = file.tensors.len();
    let operators = file.operators.len();
    match rng.below(8) {
        0 if tensors > 0 => {
            let t = rng.below(tensors);
            let shape = file.tensors[t].shape.get_or_insert_with(Vec::new);
            match rng.below(3) {
                0 if !shape.is_empty() => {
                    let axis = rng.below(shape.len());
                    shape[axis] = rng.int();
                }
                1 => shape.push(rng.int().clamp(1, 3)),
                _ => {
                    shape.pop();
                }
            }
            format!("tensor {t} shape {shape:?}")
        }
        1 if tensors > 0 => {
            let t = rng.below(tensors);
            let q = file.tensors[t]
                .quantization
                .get_or_insert_with(Box::default);
            match rng.below(4) {
                0 => q.scale = Some(vec![rng.float()]),
                1 => q.zero_point = Some(vec![rng.long()]),
                2 => q.quantized_dimension = rng.int(),
                _ => {
                    let n = rng.below(4) + 1;
                    q.scale = Some(vec![0.5; n]);
                    q.zero_point = Some(vec![0; rng.below(n + 1)]);
                }
            }
            format!("tensor {t} quantization {q:?}")
        }
        2 if tensors > 0 => {
            let t = rng.below(tensors);
            let element =
                TensorType::try_from((rng.next() % 18) as i8).unwrap_or(TensorType::Float32);
            file.tensors[t].type_ = element;
            format!("tensor {t} type {element:?}")
        }
        3 if operators > 0 => {
            let k = rng.below(operators);
            let op = &mut file.operators[k];
            let list = if rng.below(2) == 0 {
                op.inputs.get_or_insert_with(Vec::new)
            } else {
                op.outputs.get_or_insert_with(Vec::new)
            };
            let value = match rng.below(3) {
                0 => -1,
                1 => rng.int(),
                _ => rng.below(tensors + 2) as i32,
            };
            match rng.below(3) {
                0 if !list.is_empty() => {
                    let i = rng.below(list.len());
                    list[i] = value;
                }
                1 => list.push(value),
                _ => {
                    list.pop();
                }
            }
            format!("operator {k} operands {:?} -> {:?}", op.inputs, op.outputs)
        }
        4 if operators > 0 => {
            let k = rng.below(operators);
            let (a, b) = (rng.int(), rng.int());
            let f = rng.float();
            match &mut file.operators[k].builtin_options {
                Some(BuiltinOptions::Conv2DOptions(o)) => {
                    o.stride_h = a;
                    o.dilation_w_factor = b;
                }
                Some(BuiltinOptions::DepthwiseConv2DOptions(o)) => {
                    o.stride_w = a;
                    o.dilation_h_factor = b;
                }
                Some(BuiltinOptions::Pool2DOptions(o)) => {
                    o.filter_height = a;
                    o.stride_w = b;
                }
                Some(BuiltinOptions::ConcatenationOptions(o)) => o.axis = a,
                Some(BuiltinOptions::SoftmaxOptions(o)) => o.beta = f,
                Some(BuiltinOptions::StridedSliceOptions(o)) => {
                    o.begin_mask = a;
                    o.shrink_axis_mask = b;
                }
                Some(BuiltinOptions::ReshapeOptions(o)) => o.new_shape = Some(vec![a, b]),
                Some(BuiltinOptions::BatchMatMulOptions(o)) => o.adj_x = !o.adj_x,
                Some(BuiltinOptions::FullyConnectedOptions(o)) => {
                    o.keep_num_dims = !o.keep_num_dims
                }
                _ => file.operators[k].opcode_index = rng.below(file.codes.len() + 1) as u32,
            }
            format!("operator {k} options ({a}, {b}, {f})")
        }
        5 => {
            // An integer constant (pads, axes, a permutation, begin/end/strides, a bias): one
            // element changed, or its data cut short.
            let ints: Vec<usize> = (0..tensors)
                .filter(|&t| {
                    matches!(file.tensors[t].type_, TensorType::Int32 | TensorType::Int64)
                        && file
                            .buffers
                            .get(file.tensors[t].buffer as usize)
                            .is_some_and(|b| b.data.as_ref().is_some_and(|d| !d.is_empty()))
                })
                .collect();
            if ints.is_empty() {
                return "nothing".to_owned();
            }
            let t = rng.pick(&ints);
            let b = file.tensors[t].buffer as usize;
            if file.tensors[t].type_ == TensorType::Int32 && rng.below(3) == 0 {
                // The same integers as int64, where values past int32 fit.
                let data = file.buffers[b].data.as_mut().unwrap();
                *data = data
                    .chunks_exact(4)
                    .flat_map(|c| {
                        i64::from(i32::from_le_bytes([c[0], c[1], c[2], c[3]])).to_le_bytes()
                    })
                    .collect();
                file.tensors[t].type_ = TensorType::Int64;
            }
            let wide = file.tensors[t].type_ == TensorType::Int64;
            let data = file.buffers[b].data.as_mut().unwrap();
            if rng.below(4) == 0 {
                data.pop();
                return format!("tensor {t} data cut to {} bytes", data.len());
            }
            let width = if wide { 8 } else { 4 };
            let i = rng.below(data.len() / width) * width;
            let value = rng.long();
            if wide {
                data[i..i + 8].copy_from_slice(&value.to_le_bytes());
            } else {
                data[i..i + 4].copy_from_slice(&(value as i32).to_le_bytes());
            }
            format!("tensor {t} element {} = {value}", i / width)
        }
        6 if tensors > 0 => {
            let t = rng.below(tensors);
            file.tensors[t].buffer = rng.below(file.buffers.len() + 2) as u32;
            format!("tensor {t} buffer {}", file.tensors[t].buffer)
        }
        _ => {
            let list = if rng.below(2) == 0 {
                &mut file.inputs
            } else {
                &mut file.outputs
            };
            let value = rng.below(tensors + 1) as i32;
            if list.is_empty() || rng.below(2) == 0 {
                list.push(value);
            } else {
                list[0] = value;
            }
            "graph inputs or outputs".to_owned()
        }
    }
}

#[test]
fn issue_36_mutated_real_models_are_built_or_refused_never_panic() {
    let env = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let cases = env("MEMPLAN_TFLITE_FUZZ_CASES", DEFAULT_CASES);
    let seed = env("MEMPLAN_TFLITE_FUZZ_SEED", 36);
    let models = real_models();
    assert!(models.len() >= 30, "{} models", models.len());
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("tflite-fuzz");
    std::fs::create_dir_all(&dir).unwrap();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ seed.wrapping_mul(0x2545_f491_4f6c_dd1d));
    let (mut built, mut refused, mut slowest) = (0, 0, Duration::ZERO);
    for case in 0..cases {
        let (name, bytes) = &models[rng.below(models.len())];
        let mut file = FileBuilder::from_bytes(bytes).expect("a real model reads");
        let changes: Vec<String> = (0..=rng.below(3))
            .map(|_| mutate(&mut file, &mut rng))
            .collect();
        let what = format!("case {case} (seed {seed}) of {name}: {changes:?}");
        let path = dir.join(format!("case_{}.tflite", case % 8));
        std::fs::write(&path, file.bytes()).unwrap();
        let started = Instant::now();
        let read = std::panic::catch_unwind(|| {
            memplan_tflite::read("case.tflite", &file.bytes()).map(|_| ())
        });
        assert!(read.is_ok(), "the reader panicked on {what}");
        let result = std::panic::catch_unwind(|| {
            Network::from_tflite(&path)
                .name("fuzzed")
                .out_dir(&dir)
                .emit_rerun_if_changed(false)
                .generate()
                .map(|_| ())
                .map_err(|e| e.to_string())
        });
        let elapsed = started.elapsed();
        slowest = slowest.max(elapsed);
        assert!(elapsed < HANG, "{what} took {elapsed:?}");
        match result {
            Ok(Ok(())) => built += 1,
            Ok(Err(message)) => {
                assert!(!message.is_empty(), "{what}: an empty message");
                // What, where (in the message) and how to fix (its help line).
                assert!(
                    message.contains("\n  = help: "),
                    "{what}: no help in {message}"
                );
                // The dry run turns a kernel's panic into an error; here it is still a bug.
                assert!(
                    !message.contains("the kernel panicked"),
                    "{what}: {message}"
                );
                refused += 1;
            }
            Err(_) => panic!("the build panicked on {what}"),
        }
    }
    println!(
        "{cases} cases: {built} built, {refused} refused, slowest {slowest:.2?} (seed {seed})"
    );
}
