//! Property tests at the model level: random model files with in-place ops (by kind and
//! declared), pools, pinned offsets and app-owned tensors either plan into a plan that validates
//! per pool and keeps every promise (pins, pools, chains, limits), or fail with a located error;
//! never a panic. The generated code parses as Rust and is the same on every run.
#![cfg(feature = "codegen")]

use std::fmt::Write;

use memplan_core::codegen::{check, generate, plan_model};
use memplan_core::parse_model;
use proptest::prelude::*;

#[derive(Clone, Debug)]
struct Spec {
    /// Per tensor: elements (f32), pool choice (0 none, 1 first, 2 second), pin slot, external.
    tensors: Vec<(u64, u8, Option<u64>, bool)>,
    /// Per op k (producing tensor k + 1): kind index, extra input, declared in place.
    ops: Vec<(usize, Option<usize>, bool)>,
    /// 0, 1 or 2 pools; the first's size in 64-byte units; whether the second is limited.
    pools: u8,
    fast_size: u64,
    slow_limited: bool,
    inplace: bool,
}

const KINDS: [&str; 5] = ["Relu", "Add", "Conv", "Reshape", "MatMul"];

fn spec() -> impl Strategy<Value = Spec> {
    (2usize..10)
        .prop_flat_map(|n| {
            (
                prop::collection::vec(
                    (
                        1u64..48,
                        0u8..3,
                        prop::option::weighted(0.15, 0u64..8),
                        prop::bool::weighted(0.15),
                    ),
                    n,
                ),
                prop::collection::vec(
                    (
                        0usize..KINDS.len(),
                        prop::option::weighted(0.3, 0usize..64),
                        prop::bool::weighted(0.2),
                    ),
                    n - 1,
                ),
                0u8..3,
                1u64..40,
                any::<bool>(),
                prop::bool::weighted(0.85),
            )
        })
        .prop_map(
            |(tensors, ops, pools, fast_size, slow_limited, inplace)| Spec {
                tensors,
                ops,
                pools,
                fast_size,
                slow_limited,
                inplace,
            },
        )
}

/// Tensor 0 is the graph input, the last the graph output; op k reads tensor k (and maybe an
/// earlier one) and writes tensor k + 1. Only the graph input and output may be external.
fn model_text(spec: &Spec) -> String {
    let n = spec.tensors.len();
    let mut text = String::new();
    let _ = writeln!(
        text,
        "[model]\nname = \"m\"\nsolver = \"best-fit\"\ninplace = {}\ninputs = [\"t0\"]\noutputs = [\"t{}\"]",
        spec.inplace,
        n - 1
    );
    let pool_names = ["fast", "slow"];
    for (p, pool) in pool_names.iter().enumerate().take(usize::from(spec.pools)) {
        let _ = writeln!(text, "\n[[pools]]\nname = \"{pool}\"");
        if p == 0 {
            let _ = writeln!(text, "size = {}", spec.fast_size * 64);
        } else if spec.slow_limited {
            let _ = writeln!(text, "size = 4096");
        }
    }
    let _ = writeln!(text, "\n[tensors]");
    for (i, &(elements, pool, pin, external)) in spec.tensors.iter().enumerate() {
        let mut fields = vec![format!("dtype = \"f32\", shape = [{elements}]")];
        let boundary = i == 0 || i == n - 1;
        if external && boundary {
            fields.push("external = true".into());
        } else {
            if pool > 0 && usize::from(pool) <= usize::from(spec.pools) {
                fields.push(format!("pool = \"{}\"", pool_names[usize::from(pool) - 1]));
            }
            if let Some(slot) = pin {
                fields.push(format!("offset = {}", slot * 256));
            }
        }
        let _ = writeln!(text, "t{i} = {{ {} }}", fields.join(", "));
    }
    for (k, &(kind, extra, declared)) in spec.ops.iter().enumerate() {
        let mut inputs = vec![format!("\"t{k}\"")];
        if let Some(e) = extra {
            let e = e % (k + 1);
            if e != k {
                inputs.push(format!("\"t{e}\""));
            }
        }
        let _ = writeln!(
            text,
            "\n[[ops]]\nname = \"op{k}\"\nkind = \"{}\"\ninputs = [{}]\noutputs = [\"t{}\"]",
            KINDS[kind],
            inputs.join(", "),
            k + 1
        );
        if declared {
            let _ = writeln!(text, "inplace = {{ t{} = \"t{k}\" }}", k + 1);
        }
    }
    text
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn random_models_plan_validly_or_fail_with_a_location(spec in spec()) {
        let text = model_text(&spec);
        let model = match parse_model("model.toml", &text) {
            Ok(model) => model,
            Err(e) => {
                // Refused declarations and pins: located, with help.
                prop_assert!(e.line >= 1 && e.column >= 1, "{e}");
                prop_assert!(!e.message.is_empty() && !e.help.is_empty());
                return Ok(());
            }
        };
        if !spec.inplace {
            prop_assert!(model.aliases.is_empty());
        }
        let plan = match plan_model(&model) {
            Ok(plan) => plan,
            Err(e) => {
                prop_assert!(e.line >= 1, "{e}");
                prop_assert!(!e.message.contains("internal error"), "{e}");
                prop_assert!(!e.help.is_empty());
                return Ok(());
            }
        };
        prop_assert_eq!(check(&model, &plan), Vec::<String>::new());
        for (i, t) in model.tensors.iter().enumerate() {
            match plan.tensors[i] {
                None => prop_assert!(t.memory.external),
                Some(place) => {
                    prop_assert!(!t.memory.external);
                    if let Some(pin) = t.memory.offset {
                        prop_assert_eq!(place.offset, pin, "pin of {}", t.name);
                    }
                    if let Some(pool) = t.memory.pool {
                        prop_assert_eq!(place.pool, pool, "pool of {}", t.name);
                    }
                    let pool = &plan.pools[place.pool];
                    prop_assert!(place.offset + t.size <= pool.arena_size);
                    prop_assert!(pool.tensors.contains(&i));
                }
            }
        }
        for pool in &plan.pools {
            if let Some(capacity) = pool.capacity {
                prop_assert!(pool.arena_size <= capacity);
            }
        }
        for alias in &model.aliases {
            prop_assert_eq!(plan.tensors[alias.output], plan.tensors[alias.input]);
            prop_assert!(model.tensors[alias.output].size <= model.tensors[alias.input].size);
            prop_assert_eq!(model.tensors[alias.input].lifetime.end, alias.op as u64 + 1);
        }
        // Deterministic, and the generated code is Rust.
        prop_assert_eq!(&plan_model(&model).unwrap(), &plan);
        let tokens = generate(&model, &plan);
        let code = tokens.to_string();
        prop_assert!(!code.contains("compile_error"), "{code}");
        prop_assert!(syn::parse2::<syn::File>(tokens).is_ok());
        prop_assert_eq!(generate(&model, &plan).to_string(), code);
    }
}

/// The random models are mostly plannable, with chains, pools and pins in play: the property
/// above is not passing on errors alone.
#[test]
fn the_random_models_exercise_the_features() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
    let mut runner = TestRunner::new_with_rng(
        Config {
            failure_persistence: None,
            ..Config::default()
        },
        TestRng::deterministic_rng(RngAlgorithm::ChaCha),
    );
    let (mut planned, mut with_chains, mut with_pools, mut with_pins) = (0, 0, 0, 0);
    for _ in 0..300 {
        let spec = spec().new_tree(&mut runner).unwrap().current();
        let Ok(model) = parse_model("m.toml", &model_text(&spec)) else {
            continue;
        };
        let Ok(plan) = plan_model(&model) else {
            continue;
        };
        planned += 1;
        with_chains += usize::from(!plan.chains.is_empty());
        with_pools += usize::from(plan.pools.len() > 1);
        with_pins += usize::from(model.tensors.iter().any(|t| t.memory.offset.is_some()));
    }
    assert!(
        planned >= 100,
        "only {planned} of 300 random models planned"
    );
    assert!(with_chains >= 30, "{with_chains}");
    assert!(with_pools >= 30, "{with_pools}");
    assert!(with_pins >= 30, "{with_pins}");
    println!(
        "{planned} planned: {with_chains} with chains, {with_pools} with 2 pools, {with_pins} with pins"
    );
}

/// The unit cases the random ones rarely hit: a chain across the whole graph collapses into one
/// rectangle, and `inplace = false` (model or op) turns it off.
#[test]
fn chains_collapse_and_can_be_turned_off() {
    let text = |model_flag: &str, op_flag: &str| {
        format!(
            "[model]\nname = \"m\"\ninputs = [\"x\"]\noutputs = [\"d\"]\n{model_flag}\n\
             [tensors]\nx = {{ bytes = 64 }}\na = {{ bytes = 64 }}\nb = {{ bytes = 64 }}\n\
             c = {{ bytes = 32 }}\nd = {{ bytes = 64 }}\n\
             [[ops]]\nname = \"conv\"\ninputs = [\"x\"]\noutputs = [\"a\"]\n\
             [[ops]]\nname = \"relu\"\nkind = \"Relu\"\ninputs = [\"a\"]\noutputs = [\"b\"]\n\
             [[ops]]\nname = \"view\"\nkind = \"Reshape\"\ninputs = [\"b\"]\noutputs = [\"c\"]\n{op_flag}\n\
             [[ops]]\nname = \"head\"\ninputs = [\"c\"]\noutputs = [\"d\"]\n"
        )
    };
    let on = parse_model("m.toml", &text("", "")).unwrap();
    let plan = plan_model(&on).unwrap();
    assert_eq!(plan.chains, vec![vec![1, 2, 3]]);
    assert_eq!(plan.lower_bound_without_aliasing, 128);
    assert_eq!(plan.pools[0].arena_size, 128);
    let off = parse_model("m.toml", &text("inplace = false", "")).unwrap();
    assert!(off.aliases.is_empty());
    assert!(plan_model(&off).unwrap().chains.is_empty());
    let op_off = parse_model("m.toml", &text("", "inplace = false")).unwrap();
    assert_eq!(plan_model(&op_off).unwrap().chains, vec![vec![1, 2]]);
}

/// Every new key's mistakes are located errors that say how to fix them.
#[test]
fn memory_keys_have_located_errors() {
    let base = |model_extra: &str, pools: &str, x: &str, op_extra: &str| {
        format!(
            "[model]\nname = \"m\"\ninputs = [\"x\"]\noutputs = [\"y\"]\n{model_extra}\n{pools}\n\
             [tensors]\nx = {{ bytes = 64{x} }}\nh = {{ bytes = 64 }}\ny = {{ bytes = 64 }}\n\
             [[ops]]\nname = \"a\"\ninputs = [\"x\"]\noutputs = [\"h\"]\n\
             [[ops]]\nname = \"b\"\ninputs = [\"h\"]\noutputs = [\"y\"]\n{op_extra}\n"
        )
    };
    let sram = "[[pools]]\nname = \"sram\"\nsize = 128\n";
    let cases = [
        (base("inplace = 1", "", "", ""), "must be `true` or `false`"),
        (base("", "", ", pool = \"sram\"", ""), "unknown pool `sram`"),
        (
            base("", sram, ", pool = \"sarm\"", ""),
            "use one of the `[[pools]]`: `sram`",
        ),
        (
            base("", sram, ", offset = 96", ""),
            "past the 128 bytes of pool `sram`",
        ),
        (
            base("", "", ", offset = 8", ""),
            "not a multiple of its alignment 16",
        ),
        (
            base("", "", ", external = true, offset = 0", ""),
            "is `external` but also has `offset`",
        ),
        (
            base("", "[[pools]]\nname = \"op\"\n", "", ""),
            "clashes with the generated module",
        ),
        (
            base(
                "",
                "[[pools]]\nname = \"a\"\n[[pools]]\nname = \"a\"\n",
                "",
                "",
            ),
            "duplicate pool name",
        ),
        (
            base("", "[[pools]]\nname = \"a\"\nsize = 0\n", "", ""),
            "has `size = 0`",
        ),
        (
            base(
                "",
                "[[pools]]\nname = \"a_b\"\n[[pools]]\nname = \"ab\"\n",
                "",
                "",
            ),
            "give the same arena type name",
        ),
        (
            base(
                "budget = 100",
                "[[pools]]\nname = \"a\"\nsize = 64\n[[pools]]\nname = \"b\"\n",
                "",
                "",
            ),
            "over budget",
        ),
        (
            base("", "", "", "inplace = { y = \"x\" }"),
            "`x` is not one of its inputs",
        ),
        (
            base("", "", "", "inplace = { h = \"h\" }"),
            "`h` is not one of its outputs",
        ),
        (
            base("", "", "", "inplace = { y = \"nope\" }"),
            "unknown tensor `nope`",
        ),
        (base("", "", "", "inplace = 3"), "must be a table"),
        (
            base(
                "",
                "",
                ", external = true",
                "inplace = { y = \"h\" }\n[[ops]]\nname = \"c\"\ninputs = [\"x\", \"h\"]\noutputs = []",
            ),
            "still read later",
        ),
    ];
    for (text, expected) in cases {
        let error = match parse_model("m.toml", &text).and_then(|m| plan_model(&m).map(|_| ())) {
            Ok(()) => panic!("expected an error containing {expected:?} for\n{text}"),
            Err(e) => e,
        };
        let shown = error.to_string();
        assert!(shown.contains(expected), "{shown}\n--- for ---\n{text}");
        assert!(shown.contains("m.toml:"), "{shown}");
        assert!(!error.help.is_empty());
    }
    // A graph input cannot be overwritten, an external one is not in the arena at all.
    let gi = base("", "", "", "").replace(
        "outputs = [\"h\"]\n",
        "outputs = [\"h\"]\ninplace = { h = \"x\" }\n",
    );
    let e = parse_model("m.toml", &gi).unwrap_err();
    assert!(e.message.contains("graph input"), "{e}");
}
