//! Every kernel against ONNX Runtime: `kernel_cases/cases.json` holds single-node cases (inputs,
//! attributes and ONNX Runtime's outputs, made by `kernel_cases/generate.py`). Each case is run
//! three ways:
//!
//! - with separate buffers: outputs within abs 1e-5 + rel 1e-4 of ONNX Runtime (integers and
//!   bools exact), special values bit-aware ([`f32_matches`]: NaN for NaN, the same infinity,
//!   the zero of the same sign, no flushed subnormal);
//! - in place, for each input the operator may overwrite: bit-identical to the separate run;
//!   for operators that cannot run in place, an in-place input must be an error;
//! - through `supported::check_node`, which must accept the node.
//!
//! Every run gets the scratch [`scratch_len`] asks for.

mod common;

use common::{Buf, BufExt, Lcg, OwnedAttr, attr_list};
use memplan_kernels::{Attrs, Input, Output, run, scratch_len, supported};
use serde_json::Value;

#[derive(Debug, Clone)]
struct Tensor {
    shape: Vec<usize>,
    buf: Buf,
}

fn tensor(v: &Value) -> Tensor {
    let shape = v["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| usize::try_from(d.as_u64().unwrap()).unwrap())
        .collect();
    let data = v["data"].as_array().unwrap();
    // f32 values written in shortest form
    let buf = match v["dtype"].as_str().unwrap() {
        "f32" => Buf::F32(
            data.iter()
                .map(|x| match x.as_str() {
                    // Non-finite values are strings (JSON has no inf/nan).
                    Some("inf") => f32::INFINITY,
                    Some("-inf") => f32::NEG_INFINITY,
                    Some("nan") => f32::NAN,
                    _ => x.as_f64().unwrap() as f32,
                })
                .collect(),
        ),
        "i64" => Buf::I64(data.iter().map(|x| x.as_i64().unwrap()).collect()),
        "i32" => Buf::I32(
            data.iter()
                .map(|x| i32::try_from(x.as_i64().unwrap()).unwrap())
                .collect(),
        ),
        "bool" => Buf::Bool(
            data.iter()
                .map(|x| u8::try_from(x.as_i64().unwrap()).unwrap())
                .collect(),
        ),
        "i8" => Buf::I8(
            data.iter()
                .map(|x| i8::try_from(x.as_i64().unwrap()).unwrap())
                .collect(),
        ),
        "u8" => Buf::U8(
            data.iter()
                .map(|x| u8::try_from(x.as_i64().unwrap()).unwrap())
                .collect(),
        ),
        other => panic!("dtype {other}"),
    };
    Tensor { shape, buf }
}

fn attrs(v: &Value) -> Vec<(String, OwnedAttr)> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|a| {
            let name = a["name"].as_str().unwrap().to_string();
            let value = if let Some(i) = a.get("int") {
                OwnedAttr::Int(i.as_i64().unwrap())
            } else if let Some(x) = a.get("float") {
                OwnedAttr::Float(x.as_f64().unwrap() as f32)
            } else if let Some(s) = a.get("str") {
                OwnedAttr::Str(s.as_str().unwrap().to_string())
            } else if let Some(l) = a.get("ints") {
                OwnedAttr::Ints(
                    l.as_array()
                        .unwrap()
                        .iter()
                        .map(|x| x.as_i64().unwrap())
                        .collect(),
                )
            } else if let Some(l) = a.get("floats") {
                OwnedAttr::Floats(
                    l.as_array()
                        .unwrap()
                        .iter()
                        .map(|x| x.as_f64().unwrap() as f32)
                        .collect(),
                )
            } else if let Some(l) = a.get("strs") {
                OwnedAttr::Strs(
                    l.as_array()
                        .unwrap()
                        .iter()
                        .map(|x| &*String::leak(x.as_str().unwrap().to_string()))
                        .collect(),
                )
            } else {
                panic!("attribute {a}")
            };
            (name, value)
        })
        .collect()
}

struct Case {
    name: String,
    op: String,
    attrs: Vec<(String, OwnedAttr)>,
    inputs: Vec<Option<Tensor>>,
    outputs: Vec<Tensor>,
}

fn cases() -> Vec<Case> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/kernel_cases/cases.json");
    let text = std::fs::read_to_string(path).unwrap();
    let json: Value = serde_json::from_str(&text).unwrap();
    json.as_array()
        .unwrap()
        .iter()
        .map(|c| Case {
            name: c["name"].as_str().unwrap().to_string(),
            op: c["op"].as_str().unwrap().to_string(),
            attrs: attrs(&c["attrs"]),
            inputs: c["inputs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| if t.is_null() { None } else { Some(tensor(t)) })
                .collect(),
            outputs: c["outputs"]
                .as_array()
                .unwrap()
                .iter()
                .map(tensor)
                .collect(),
        })
        .collect()
}

/// Runs `case`, input `in_place` (if any) sharing output 0's buffer; returns the outputs.
fn execute(case: &Case, in_place: Option<usize>) -> Result<Vec<Buf>, String> {
    let mut bufs: Vec<Buf> = case.outputs.iter().map(|t| t.buf.blank()).collect();
    if let Some(i) = in_place {
        bufs[0] = case.inputs[i].as_ref().unwrap().buf.clone();
    }
    let inputs: Vec<Input<'_>> = case
        .inputs
        .iter()
        .enumerate()
        .map(|(i, t)| match t {
            None => Input::Absent,
            Some(t) if in_place == Some(i) => Input::InPlace {
                output: 0,
                shape: &t.shape,
            },
            Some(t) => Input::Value {
                shape: &t.shape,
                data: t.buf.data(),
            },
        })
        .collect();
    let list = attr_list(&case.attrs);
    let attrs = Attrs::new(&list);
    let in_shapes: Vec<Option<&[usize]>> = case
        .inputs
        .iter()
        .map(|t| t.as_ref().map(|t| t.shape.as_slice()))
        .collect();
    let out_shapes: Vec<&[usize]> = case.outputs.iter().map(|t| t.shape.as_slice()).collect();
    // A node whose scratch cannot be sized runs without any: the kernel must refuse it.
    let words = scratch_len(&case.op, &attrs, &in_shapes, &out_shapes).unwrap_or(0);
    let mut scratch = vec![0u64; words];
    let mut outputs: Vec<Output<'_>> = bufs
        .iter_mut()
        .zip(&case.outputs)
        .map(|(b, t)| Output {
            shape: &t.shape,
            data: b.data_mut(),
        })
        .collect();
    run(&case.op, &attrs, &inputs, &mut outputs, &mut scratch).map_err(|e| e.to_string())?;
    drop(outputs);
    Ok(bufs)
}

/// The inputs `op` may run in place on (all: every input of an elementwise operator).
fn in_place_inputs(op: &str, n: usize) -> Option<Vec<usize>> {
    const UNARY: &[&str] = &[
        "Relu",
        "Sigmoid",
        "Tanh",
        "Sqrt",
        "Exp",
        "Log",
        "Erf",
        "Reciprocal",
        "Floor",
        "Ceil",
        "Round",
        "Sin",
        "Cos",
        "Softplus",
        "Neg",
        "Abs",
        "Sign",
        "Not",
        "HardSigmoid",
        "HardSwish",
        "LeakyRelu",
        "Elu",
        "Clip",
        "Reshape",
        "Flatten",
        "Squeeze",
        "Unsqueeze",
        "Identity",
        "Dropout",
        "Expand",
        "BatchNormalization",
        "LayerNormalization",
        "Softmax",
        "LogSoftmax",
        "Trilu",
        "InstanceNormalization",
        "Selu",
        "Celu",
        "Softsign",
        "ThresholdedRelu",
        "Mish",
        "Gelu",
        "Tan",
        "Asin",
        "Acos",
        "Atan",
        "Sinh",
        "Cosh",
        "Asinh",
        "Acosh",
        "Atanh",
        "LpNormalization",
        "ScatterND",
        "ScatterElements",
    ];
    const NARY: &[&str] = &[
        "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean", "And", "Or", "Xor",
        "PRelu", "Mod",
    ];
    if UNARY.contains(&op) {
        Some(vec![0])
    } else if NARY.contains(&op) {
        Some((0..n).collect())
    } else if op == "Where" {
        Some(vec![1, 2])
    } else {
        None
    }
}

/// Whether `a` (ours) stands for `b` (ONNX Runtime's), bit-aware for special values: NaN only
/// for NaN (of any sign and payload: neither is portable), an infinity only for the same
/// infinity, a zero only for the zero of the same sign. Other values are within abs 1e-5 + rel
/// 1e-4, with one more rule for subnormals: where ONNX Runtime keeps a subnormal, zero is wrong
/// (a flushed subnormal). The converse is allowed: ONNX Runtime's approximations of exp, tanh,
/// ... round tiny results to zero where libm keeps them.
fn f32_matches(a: f32, b: f32) -> bool {
    if a.is_nan() || b.is_nan() {
        return a.is_nan() && b.is_nan();
    }
    if a.is_infinite() || b.is_infinite() || (a == 0.0 && b == 0.0) {
        return a.to_bits() == b.to_bits();
    }
    if b.is_subnormal() && a == 0.0 {
        return false;
    }
    (a - b).abs() <= 1e-5 + 1e-4 * b.abs()
}

fn close(got: &Buf, want: &Buf) -> Result<(), String> {
    match (got, want) {
        (Buf::F32(g), Buf::F32(w)) => {
            let wrong: Vec<String> = g
                .iter()
                .zip(w)
                .enumerate()
                .filter(|&(_, (&a, &b))| !f32_matches(a, b))
                .map(|(i, (a, b))| format!("element {i}: got {a:e}, ONNX Runtime {b:e}"))
                .collect();
            match wrong.len() {
                0 => Ok(()),
                n => Err(format!(
                    "{n} of {} elements differ: {}",
                    w.len(),
                    wrong[..n.min(8)].join("; ")
                )),
            }
        }
        _ if got == want => Ok(()),
        _ => Err(format!("got {got:?}, ONNX Runtime {want:?}")),
    }
}

fn bits(b: &Buf) -> Vec<u64> {
    match b {
        Buf::F32(d) => d.iter().map(|x| u64::from(x.to_bits())).collect(),
        Buf::I64(d) => d
            .iter()
            .map(|&x| u64::from_ne_bytes(x.to_ne_bytes()))
            .collect(),
        Buf::I32(d) => d
            .iter()
            .map(|&x| u64::from(u32::from_ne_bytes(x.to_ne_bytes())))
            .collect(),
        Buf::Bool(d) => d.iter().map(|&x| u64::from(x)).collect(),
        Buf::I8(d) => d.iter().map(|&x| u64::from(x.cast_unsigned())).collect(),
        Buf::U8(d) => d.iter().map(|&x| u64::from(x)).collect(),
    }
}

fn check_case(case: &Case) -> Result<usize, String> {
    // The scratch of a valid node can be sized.
    let list = attr_list(&case.attrs);
    let in_shapes: Vec<Option<&[usize]>> = case
        .inputs
        .iter()
        .map(|t| t.as_ref().map(|t| t.shape.as_slice()))
        .collect();
    let out_shapes: Vec<&[usize]> = case.outputs.iter().map(|t| t.shape.as_slice()).collect();
    scratch_len(&case.op, &Attrs::new(&list), &in_shapes, &out_shapes)
        .map_err(|e| format!("scratch_len: {e}"))?;
    let separate = execute(case, None)?;
    for (o, (got, want)) in separate.iter().zip(&case.outputs).enumerate() {
        close(got, &want.buf).map_err(|e| format!("output {o}: {e}"))?;
    }
    // In place: every eligible input in turn.
    let mut in_place_runs = 0;
    let allowed = in_place_inputs(&case.op, case.inputs.len());
    for (i, t) in case.inputs.iter().enumerate() {
        let Some(t) = t else { continue };
        let out0 = &case.outputs[0].buf;
        if !t.buf.same_type(out0) || t.buf.len() != out0.len() {
            continue;
        }
        let result = execute(case, Some(i));
        if allowed.as_ref().is_some_and(|a| a.contains(&i)) {
            let shared = result.map_err(|e| format!("in place on input {i}: {e}"))?;
            for (o, (a, b)) in shared.iter().zip(&separate).enumerate() {
                if bits(a) != bits(b) {
                    return Err(format!(
                        "in place on input {i}: output {o} differs from the separate run"
                    ));
                }
            }
            in_place_runs += 1;
        } else if result.is_ok() {
            return Err(format!("in place on input {i} must be an error"));
        }
    }
    // The build-time check accepts the node.
    let ints: Vec<(&str, i64)> = case
        .attrs
        .iter()
        .filter_map(|(n, a)| match a {
            OwnedAttr::Int(v) => Some((n.as_str(), *v)),
            _ => None,
        })
        .collect();
    let strs: Vec<(&str, &str)> = case
        .attrs
        .iter()
        .filter_map(|(n, a)| match a {
            OwnedAttr::Str(v) => Some((n.as_str(), v.as_str())),
            _ => None,
        })
        .collect();
    supported::check_node(&case.op, &ints, &strs).map_err(|e| e.to_string())?;
    Ok(in_place_runs)
}

#[test]
fn every_case_matches_onnx_runtime_in_place_or_not() {
    let cases = cases();
    assert!(cases.len() > 200, "only {} cases", cases.len());
    let mut failures = Vec::new();
    let mut in_place_runs = 0;
    for case in &cases {
        match check_case(case) {
            Ok(n) => in_place_runs += n,
            Err(e) => failures.push(format!("{} ({}): {e}", case.name, case.op)),
        }
    }
    println!(
        "{} cases against ONNX Runtime, {in_place_runs} in-place runs",
        cases.len()
    );
    assert!(in_place_runs > 100, "only {in_place_runs} in-place runs");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_supported_op_has_a_reference_case() {
    let cases = cases();
    let missing: Vec<&&str> = supported::SUPPORTED_OPS
        .iter()
        .filter(|op| !cases.iter().any(|c| c.op == **op))
        .collect();
    assert!(missing.is_empty(), "no ONNX Runtime case for {missing:?}");
}

/// `buf` resized to `n` elements (repeating its values, or a default).
fn resized(buf: &Buf, n: usize) -> Buf {
    fn cycle<T: Copy + Default>(d: &[T], n: usize) -> Vec<T> {
        (0..n)
            .map(|i| {
                if d.is_empty() {
                    T::default()
                } else {
                    d[i % d.len()]
                }
            })
            .collect()
    }
    match buf {
        Buf::F32(d) => Buf::F32(cycle(d, n)),
        Buf::I64(d) => Buf::I64(cycle(d, n)),
        Buf::I32(d) => Buf::I32(cycle(d, n)),
        Buf::Bool(d) => Buf::Bool(cycle(d, n)),
        Buf::I8(d) => Buf::I8(cycle(d, n)),
        Buf::U8(d) => Buf::U8(cycle(d, n)),
    }
}

/// One random change to a valid case: a dimension, an integer input's values, an attribute,
/// an input dropped or run in place, an output's dtype.
fn perturb(case: &Case, rng: &mut Lcg) -> (Case, Option<usize>) {
    let mut inputs = case.inputs.clone();
    let mut outputs = case.outputs.clone();
    let mut attrs = case.attrs.clone();
    let mut in_place = None;
    let odd_ints = [-9i64, -2, -1, 0, 1, 2, 3, 5, i64::MAX, i64::MIN];
    match rng.index(7) {
        0 | 1 => {
            let k = rng.index(inputs.len() + outputs.len());
            let t = if k < inputs.len() {
                inputs[k].as_mut()
            } else {
                Some(&mut outputs[k - inputs.len()])
            };
            if let Some(t) = t {
                if t.shape.is_empty() || rng.index(4) == 0 {
                    t.shape.push(1 + rng.index(2));
                } else {
                    let d = rng.index(t.shape.len());
                    t.shape[d] = rng.index(5);
                }
                t.buf = resized(&t.buf, t.shape.iter().product());
            }
        }
        2 => {
            if let Some(Some(t)) = inputs.get_mut(rng.index(case.inputs.len().max(1)))
                && let Buf::I64(d) = &mut t.buf
            {
                for v in d.iter_mut() {
                    *v = odd_ints[rng.index(odd_ints.len())];
                }
            }
        }
        3 if !attrs.is_empty() => {
            let k = rng.index(attrs.len());
            attrs[k].1 = match rng.index(4) {
                0 => OwnedAttr::Int(odd_ints[rng.index(odd_ints.len())]),
                1 => OwnedAttr::Ints(
                    (0..rng.index(6))
                        .map(|_| odd_ints[rng.index(odd_ints.len())])
                        .collect(),
                ),
                2 => OwnedAttr::Str("bogus".into()),
                _ => OwnedAttr::Float(f32::NAN),
            };
        }
        4 if !inputs.is_empty() => {
            let k = rng.index(inputs.len());
            inputs[k] = None;
        }
        5 => {
            if let Some(b) = outputs.first_mut() {
                b.buf = match &b.buf {
                    Buf::F32(d) => Buf::I64(vec![0; d.len()]),
                    other => Buf::F32(vec![0.0; other.len()]),
                };
            }
        }
        _ => {
            // In place on an input of the same size and type, whatever the operator.
            let out0 = &case.outputs[0].buf;
            let k = rng.index(inputs.len().max(1));
            if let Some(Some(t)) = inputs.get(k)
                && t.buf.same_type(out0)
                && t.buf.len() == out0.len()
            {
                in_place = Some(k);
            }
        }
    }
    let perturbed = Case {
        name: case.name.clone(),
        op: case.op.clone(),
        attrs,
        inputs,
        outputs,
    };
    (perturbed, in_place)
}

#[test]
fn perturbed_cases_never_panic() {
    let mut rng = Lcg(7);
    let mut errors = 0;
    let mut total = 0;
    for case in cases() {
        for _ in 0..60 {
            let (bad, in_place) = perturb(&case, &mut rng);
            if std::env::var_os("KERNELS_TRACE").is_some() {
                eprintln!(
                    "{} {:?} {:?}",
                    case.name,
                    bad.inputs
                        .iter()
                        .map(|t| t.as_ref().map(|t| &t.shape))
                        .collect::<Vec<_>>(),
                    bad.attrs
                );
            }
            let result =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| execute(&bad, in_place)));
            match result {
                Ok(r) => errors += usize::from(r.is_err()),
                Err(_) => panic!(
                    "{} panicked: inputs {:?}, outputs {:?}, attrs {:?}, in place {in_place:?}",
                    case.name,
                    bad.inputs
                        .iter()
                        .map(|t| t.as_ref().map(|t| (&t.shape, &t.buf)))
                        .collect::<Vec<_>>(),
                    bad.outputs.iter().map(|t| &t.shape).collect::<Vec<_>>(),
                    bad.attrs,
                ),
            }
            total += 1;
        }
    }
    println!("{total} perturbed cases, {errors} errors");
    assert!(
        errors > total / 4,
        "only {errors} of {total} perturbations were errors"
    );
}
