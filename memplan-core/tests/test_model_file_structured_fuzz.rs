//! Structure-aware fuzzing of the model file: random but well-formed-looking models (tensors of
//! every kind, ops with in-place pairs, pools, pins, app-owned tensors, model keys), with a few
//! deliberate mistakes (unknown names, sizes of zero, odd alignments, huge shapes). Whatever
//! comes out, nothing panics: a model that parses plans validly and generates code (or fails
//! with a located error), and a refused model's error is inside the file.
//!
//! Longer run: `PROPTEST_CASES=20000 cargo test -p memplan-core --test test_model_file_structured_fuzz`.
#![cfg(feature = "codegen")]

use memplan_core::{codegen, expand_model, parse_model};
use proptest::prelude::*;

#[derive(Clone, Debug)]
struct TensorSpec {
    layout: u8,
    dim: u64,
    align: Option<u32>,
    pool: Option<u8>,
    offset: Option<u64>,
    external: bool,
}

/// The op that produces tensor `j + 1` from earlier tensors (`reads`, taken modulo `j + 1`).
#[derive(Clone, Debug)]
struct OpSpec {
    kind: u8,
    reads: Vec<u8>,
    /// `Some(None)`: `inplace = false`; `Some(Some(())`: its output over its first input.
    inplace: Option<Option<()>>,
}

#[derive(Clone, Debug)]
struct ModelSpec {
    tensors: Vec<TensorSpec>,
    ops: Vec<OpSpec>,
    pools: Vec<Option<u64>>,
    inplace: Option<bool>,
    solver: Option<u8>,
    alignment: Option<u32>,
    budget: Option<u64>,
    /// A deliberate mistake: `(which, where)`.
    mistake: Option<(u8, u8)>,
}

fn tensor() -> impl Strategy<Value = TensorSpec> {
    (
        0u8..6,
        prop_oneof![8 => 1u64..64, 1 => Just(0u64), 1 => Just(1u64 << 40)],
        prop::option::weighted(0.2, 0u32..8),
        prop::option::weighted(0.3, 0u8..3),
        prop::option::weighted(0.1, (0u64..8).prop_map(|k| k * 64)),
        prop::bool::weighted(0.1),
    )
        .prop_map(|(layout, dim, align, pool, offset, external)| TensorSpec {
            layout,
            dim,
            align,
            pool,
            offset,
            external,
        })
}

fn op() -> impl Strategy<Value = OpSpec> {
    (
        0u8..5,
        prop::collection::vec(any::<u8>(), 1..3),
        prop::option::weighted(0.3, prop::option::weighted(0.8, Just(()))),
    )
        .prop_map(|(kind, reads, inplace)| OpSpec {
            kind,
            reads,
            inplace,
        })
}

fn model() -> impl Strategy<Value = ModelSpec> {
    (
        prop::collection::vec((tensor(), op()), 2..10),
        prop::collection::vec(
            prop::option::of(prop_oneof![Just(64u64), Just(4096u64)]),
            0..3,
        ),
        prop::option::of(any::<bool>()),
        prop::option::weighted(0.3, 0u8..6),
        prop::option::weighted(0.2, 0u32..8),
        prop::option::weighted(0.2, prop_oneof![Just(16u64), Just(1u64 << 20)]),
        prop::option::weighted(0.15, (0u8..4, any::<u8>())),
    )
        .prop_map(
            |(tensors_ops, pools, inplace, solver, alignment, budget, mistake)| {
                let (tensors, ops) = tensors_ops.into_iter().unzip();
                ModelSpec {
                    tensors,
                    ops,
                    pools,
                    inplace,
                    solver,
                    alignment,
                    budget,
                    mistake,
                }
            },
        )
}

/// Tensor `k` is `t{k}`.
fn names(list: &[usize]) -> String {
    let quoted: Vec<String> = list.iter().map(|k| format!("\"t{k}\"")).collect();
    format!("[{}]", quoted.join(", "))
}

fn render(spec: &ModelSpec) -> String {
    let mut text = String::from("[model]\nname = \"net\"\n");
    if let Some(inplace) = spec.inplace {
        text += &format!("inplace = {inplace}\n");
    }
    if let Some(solver) = spec.solver {
        let name = ["auto", "best-fit", "first-fit", "patent", "exact", "naive"][solver as usize];
        text += &format!("solver = \"{name}\"\n");
    }
    if let Some(log) = spec.alignment {
        text += &format!("alignment = {}\n", (1u64 << log) + u64::from(log == 7));
    }
    if let Some(budget) = spec.budget {
        text += &format!("budget = {budget}\n");
    }
    let n = spec.tensors.len();
    let mistake = |which: u8| spec.mistake.filter(|m| m.0 == which).map(|m| m.1 as usize);
    text += "inputs = [\"t0\"]\n";
    text += &format!("outputs = {}\n", names(&[n - 1]));
    for (p, size) in spec.pools.iter().enumerate() {
        text += &format!("\n[[pools]]\nname = \"p{p}\"\n");
        if let Some(size) = size {
            text += &format!("size = {size}\n");
        }
    }
    text += "\n[tensors]\n";
    for (k, t) in spec.tensors.iter().enumerate() {
        let mut fields = vec![match t.layout {
            0 => format!("bytes = {}", t.dim * 4),
            1 => format!("dtype = \"f32\", shape = [{}]", t.dim),
            2 => format!("dtype = \"i8\", shape = [2, {}]", t.dim),
            3 => format!("dtype = \"f16\", shape = [{}, {}]", t.dim, t.dim),
            4 => format!("dtype = \"u8\", shape = [{}, 1 , 3]", t.dim),
            _ => format!("bytes = \"{} KiB\"", t.dim),
        }];
        if let Some(log) = t.align {
            fields.push(format!("align = {}", 1u64 << log));
        }
        // A pool that exists, unless the mistake is an unknown pool.
        if let Some(pool) = t
            .pool
            .filter(|_| !spec.pools.is_empty() || mistake(0).is_some())
        {
            let pool = usize::from(pool) % spec.pools.len().max(1);
            fields.push(format!("pool = \"p{pool}\""));
        }
        if let Some(offset) = t.offset {
            fields.push(format!("offset = {offset}"));
        }
        if t.external {
            fields.push("external = true".into());
        }
        text += &format!("t{k} = {{ {} }}\n", fields.join(", "));
    }
    // Op `j - 1` produces tensor `j` from earlier ones: a valid schedule, but for the mistakes.
    for (j, op) in spec.ops.iter().enumerate().skip(1) {
        text += &format!("\n[[ops]]\nname = \"op{j}\"\n");
        let kind = ["Relu", "Add", "Conv", "Reshape", "MyOp"][op.kind as usize];
        text += &format!("kind = \"{kind}\"\n");
        let mut reads: Vec<usize> = op.reads.iter().map(|&r| usize::from(r) % j).collect();
        if mistake(1).is_some_and(|at| at % n == j) {
            reads.push(n + 3); // unknown tensor
        }
        if mistake(2).is_some_and(|at| at % n == j) {
            reads.push(n - 1); // read before it is produced (or by its producer)
        }
        text += &format!("inputs = {}\n", names(&reads));
        text += &format!("outputs = {}\n", names(&[j]));
        match op.inplace {
            None => {}
            Some(None) => text += "inplace = false\n",
            Some(Some(())) => text += &format!("inplace = {{ t{j} = \"t{}\" }}\n", reads[0]),
        }
    }
    if let Some(at) = mistake(3) {
        // A tensor no op touches.
        text = text.replacen(
            "[tensors]\n",
            &format!("[tensors]\nunused{at} = {{ bytes = 4 }}\n"),
            1,
        );
    }
    text
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn structured_models_plan_validly_or_fail_located(spec in model()) {
        let text = render(&spec);
        let lines = text.lines().count().max(1) + 1;
        match parse_model("model.toml", &text) {
            Ok(model) => {
                match codegen::plan_model(&model) {
                    Ok(plan) => {
                        let problems = codegen::check(&model, &plan);
                        prop_assert!(problems.is_empty(), "{:?}\n{}", problems, text);
                        let _ = codegen::generate(&model, &plan);
                    }
                    Err(error) => {
                        prop_assert!(error.line >= 1 && error.line <= lines, "{error}\n{text}");
                    }
                }
                let _ = expand_model("model.toml", &text);
            }
            Err(error) => {
                prop_assert!(error.line >= 1 && error.line <= lines, "{error} in\n{text}");
                prop_assert!(error.column >= 1, "{error}");
                prop_assert!(!error.message.is_empty() && !error.help.is_empty(), "{error}");
                let _ = codegen::placeholder(&text, proc_macro2::TokenStream::new());
            }
        }
    }
}
