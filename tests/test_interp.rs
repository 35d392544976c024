//! The tables for interpreters of the golden `interp` model: a loop over `OPS` takes every view
//! of every op by index, and each view is exactly the tensor's planned bytes; the tables say
//! what the model file says (shapes, dtypes, weights, attributes, operands).

#[allow(missing_docs, unreachable_pub)]
mod interp {
    include!("../memplan-core/tests/golden/interp/expected.rs");
}
#[allow(missing_docs, unreachable_pub)]
mod pools {
    include!("../memplan-core/tests/golden/pools/expected.rs");
}

use interp::interp as m;
use memplan::{Attr, DType, Operand};

#[test]
fn every_view_of_every_op_is_its_tensors_planned_bytes() {
    let mut arena = m::Arena::new();
    let base = core::ptr::from_ref(&arena) as usize;
    let mut seen = 0;
    for (k, op) in m::OPS.iter().enumerate() {
        assert_eq!(op.step, k);
        let mut views = arena.views(k).expect("every op has views");
        assert!(views.len() <= m::MAX_VIEWS);
        // Every arena tensor the op touches: inputs, outputs, scratch.
        let mut tensors: Vec<usize> = op
            .inputs
            .iter()
            .filter_map(|o| match o {
                Operand::Tensor(t) => Some(*t),
                _ => None,
            })
            .chain(op.outputs.iter().copied())
            .chain(op.scratch.iter().copied())
            .filter(|&t| !m::TENSOR_INFO[t].external)
            .collect();
        tensors.dedup();
        let mut taken = 0;
        for &t in &tensors {
            // The other tensor of an in-place pair: one view for both, taken under either index.
            let partner = op.inplace.iter().find_map(|&(output, input)| {
                (input == t)
                    .then_some(output)
                    .or((output == t).then_some(input))
            });
            let info = &m::TENSOR_INFO[t];
            match views.take_bytes(t) {
                Some(bytes) => {
                    assert_eq!(bytes.as_ptr() as usize - base, info.offset, "{}", info.name);
                    assert_eq!(bytes.len(), info.size, "{}", info.name);
                    taken += 1;
                    if let Some(partner) = partner {
                        assert!(views.take_bytes(partner).is_none(), "{} twice", info.name);
                    }
                }
                None => assert!(
                    partner.is_some(),
                    "op {} has no view of {}",
                    op.name,
                    info.name
                ),
            }
            // Never twice.
            assert!(views.take_bytes(t).is_none());
        }
        assert_eq!(taken, views.len(), "op {}", op.name);
        seen += taken;
    }
    assert_eq!(views_of_named_ops(), seen);
    assert!(arena.views(m::OPS.len()).is_none());
}

/// The same views through `op_<name>()`: one count per field that lives in the arena.
fn views_of_named_ops() -> usize {
    let mut arena = m::Arena::new();
    let image = [0.0f32; m::len::image];
    let conv1 = arena.op_conv1(&image);
    let _ = (conv1.conv, conv1.dma, conv1.idx, conv1.col);
    let relu = arena.op_relu();
    let _ = relu.act;
    let pool = arena.op_pool();
    let _ = (pool.act, pool.dma, pool.idx, pool.pooled);
    let fc = arena.op_fc();
    let _ = (fc.pooled, fc.logits);
    let softmax = arena.op_softmax();
    let _ = (softmax.logits, softmax.probs);
    4 + 1 + 4 + 2 + 2
}

#[test]
fn typed_views_by_index_run_an_interpreter_loop() {
    let mut arena = m::Arena::new();
    let image = [1.0f32; m::len::image];
    for (k, op) in m::OPS.iter().enumerate() {
        let mut views = arena.views(k).unwrap();
        match op.kind {
            Some("Conv") => {
                let conv = views.output::<f32>(op.outputs[0]).unwrap();
                assert_eq!(conv.len(), m::shape::conv.iter().product::<usize>());
                conv.fill(image[0] * 2.0);
            }
            Some("Relu") => {
                // In place: the output's view is the input's bytes, already holding its values.
                let (out, input) = op.inplace[0];
                assert_eq!((out, input), (3, 2));
                let act = views.output::<f32>(out).unwrap();
                assert!(act.iter().all(|&x| x == 2.0));
                act.iter_mut().for_each(|x| *x = x.max(0.0) + 1.0);
            }
            Some("GlobalAveragePool") => {
                let Operand::Tensor(a) = op.inputs[0] else {
                    panic!()
                };
                let act = views.input::<f32>(a).unwrap();
                let pooled = views.output::<f32>(op.outputs[0]).unwrap();
                assert!(act.iter().all(|&x| x == 3.0));
                pooled.fill(act[0]);
            }
            Some("Gemm") => {
                assert_eq!(op.inputs[1], Operand::Weight(2));
                assert_eq!(op.inputs[2], Operand::Absent);
                assert_eq!(m::WEIGHTS[2].shape, &m::weight_shape::fc_weight);
                let Operand::Tensor(p) = op.inputs[0] else {
                    panic!()
                };
                let pooled = views.input::<f32>(p).unwrap();
                let logits = views.output::<f32>(op.outputs[0]).unwrap();
                logits.fill(pooled[0] * 10.0);
            }
            Some("Softmax") => {
                assert_eq!(op.attr("axis"), Some(Attr::Int(-1)));
                let Operand::Tensor(l) = op.inputs[0] else {
                    panic!()
                };
                let logits = views.input::<f32>(l).unwrap();
                assert!(logits.iter().all(|&x| x == 30.0), "{logits:?}");
                views.output::<f32>(op.outputs[0]).unwrap().fill(0.1);
            }
            other => panic!("unexpected kind {other:?}"),
        }
    }
}

#[test]
fn tables_describe_the_model_file() {
    assert_eq!(m::TENSOR_INFO.len(), 9);
    assert_eq!(m::TENSOR_INFO[0].name, "image");
    assert!(m::TENSOR_INFO[0].external);
    assert_eq!(m::shape::image, [1, 3, 8, 8]);
    assert_eq!(m::shape::col, [432]);
    assert_eq!(m::dtype::idx, DType::I64);
    assert_eq!(m::dtype::col, DType::U8);
    assert_eq!(m::TENSOR_INFO[1].offset, 0, "dma is pinned at 0");
    // The arena tensors of TENSOR_INFO are TENSORS, in the same order.
    let arena: Vec<_> = m::TENSOR_INFO.iter().filter(|t| !t.external).collect();
    assert_eq!(arena.len(), m::TENSORS.len());
    for (info, placement) in arena.iter().zip(m::TENSORS) {
        assert_eq!(
            (info.name, info.offset, info.size),
            (placement.name, placement.offset, placement.size)
        );
        assert_eq!(
            info.size,
            info.shape.iter().product::<usize>() * info.dtype.size()
        );
    }
    let names: Vec<_> = m::WEIGHTS.iter().map(|w| w.name).collect();
    assert_eq!(names, ["conv1_weight", "conv1_bias", "fc_weight", "axes"]);
    assert_eq!(m::weight_shape::conv1_weight, [4, 3, 3, 3]);
    assert_eq!(m::weight_shape::axes, [0usize; 0]);
    assert_eq!(m::weight_dtype::axes, DType::I64);
    assert_eq!(m::WEIGHTS[0].source, Some("conv1.weight"));
    assert_eq!(m::WEIGHTS[2].source, None);
    assert_eq!(m::attrs::conv1::STRIDES, [2, 2]);
    assert_eq!(m::attrs::conv1::AUTO_PAD, "NOTSET");
    assert_eq!(m::attrs::conv1::ALPHA, 0.2);
    assert_eq!(m::attrs::conv1::ALPHA_2, -1.5e-3);
    const { assert!(m::attrs::conv1::X_Y) };
    assert_eq!(m::attrs::conv1::EMPTY, [0i64; 0]);
    assert_eq!(m::attrs::conv1::MODES, ["a", "b"]);
    assert_eq!(m::attrs::fc::TRANS_B, 1);
    let conv1 = &m::OPS[0];
    assert_eq!(conv1.kind, Some("Conv"));
    assert_eq!(
        conv1.inputs,
        &[Operand::Tensor(0), Operand::Weight(0), Operand::Weight(1)]
    );
    assert_eq!(conv1.attr("pads"), Some(Attr::Ints(&[1, 1, 1, 1])));
    assert_eq!(conv1.attr("modes"), Some(Attr::Strs(&["a", "b"])));
    assert_eq!(conv1.attrs.len(), 10);
    assert_eq!(conv1.attr("nope"), None);
}

#[test]
fn views_by_index_reach_across_pools() {
    use pools::pools as p;
    let mut sram = p::sram::Arena::new();
    let mut dram = p::dram::Arena::new();
    let bases = [
        core::ptr::from_ref(&sram) as usize,
        core::ptr::from_ref(&dram) as usize,
    ];
    let mut arenas = p::Arenas::new(&mut sram, &mut dram);
    for (k, op) in p::OPS.iter().enumerate() {
        let mut views = arenas.views(k).unwrap();
        for cut in op.cuts {
            let info = &p::TENSOR_INFO[cut.tensor];
            let bytes = views.take_bytes(cut.tensor).unwrap();
            assert_eq!(cut.pool, info.pool);
            assert_eq!(
                bytes.as_ptr() as usize - bases[info.pool],
                info.offset,
                "{}",
                info.name
            );
            assert_eq!(bytes.len(), info.size);
        }
    }
}
