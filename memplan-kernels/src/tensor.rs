//! Tensor views: how a kernel sees its inputs and outputs.
//!
//! A kernel never owns memory. Each input is a shape plus a borrowed slice of elements (an
//! activation, a weight or a constant), or, for an operator the planner runs *in place*, a
//! reference to the output buffer that already holds the input's values. Each output is a shape
//! plus a mutable slice, pre-sized by the caller.

use arrayvec::ArrayVec;

use crate::error::{KernelError, bail, error};

/// The highest tensor rank the kernels take. Shapes, strides and index counters live on the
/// stack in arrays of this length (a [`Dims`] is 72 bytes on a 64-bit target), so no kernel
/// allocates; a shape of higher rank is refused (an error, never a panic) before any kernel runs.
pub const MAX_RANK: usize = 8;

/// The most integers an integer operand or attribute list may hold (a shape, axes, pads,
/// split sizes): `4 * MAX_RANK`.
pub const MAX_INTS: usize = 4 * MAX_RANK;

/// A shape, strides or a multi-index: at most [`MAX_RANK`] `usize`s, on the stack.
pub type Dims = ArrayVec<usize, MAX_RANK>;

/// A short list of integers (an operand like Reshape's shape or Slice's starts): at most
/// [`MAX_INTS`], on the stack.
pub type Ints = ArrayVec<i64, MAX_INTS>;

/// Appends `value` to `list`, or an error naming the capacity (never a panic).
pub(crate) fn push<T, const N: usize>(
    list: &mut ArrayVec<T, N>,
    value: T,
) -> Result<(), KernelError> {
    list.try_push(value)
        .map_err(|_| error!("more than {N} dimensions or values (the kernels' limit)"))
}

/// `len` copies of `value`, or an error when `len` exceeds [`MAX_RANK`].
pub(crate) fn dims_filled(value: usize, len: usize) -> Result<Dims, KernelError> {
    collect((0..len).map(|_| value))
}

/// The items of `iter`, or an error when there are more than `N` (never a panic).
pub(crate) fn collect<T, const N: usize>(
    iter: impl IntoIterator<Item = T>,
) -> Result<ArrayVec<T, N>, KernelError> {
    let mut out = ArrayVec::new();
    for item in iter {
        push(&mut out, item)?;
    }
    Ok(out)
}

/// The `Ok` items of `iter`, the first error, or an error when there are more than `N`.
pub(crate) fn try_collect<T, const N: usize>(
    iter: impl IntoIterator<Item = Result<T, KernelError>>,
) -> Result<ArrayVec<T, N>, KernelError> {
    let mut out = ArrayVec::new();
    for item in iter {
        push(&mut out, item?)?;
    }
    Ok(out)
}

/// The element type of a tensor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DType {
    /// `float32`.
    F32,
    /// `int64`.
    I64,
    /// `int32`.
    I32,
    /// `bool`, one byte per element, 0 or 1.
    Bool,
    /// `int8`: quantized values (TFLite's and ONNX's int8 networks).
    I8,
    /// `uint8`: quantized values (ONNX Runtime's default activation type).
    U8,
}

impl DType {
    /// The ONNX name of the type.
    pub fn name(self) -> &'static str {
        match self {
            DType::F32 => "float32",
            DType::I64 => "int64",
            DType::I32 => "int32",
            DType::Bool => "bool",
            DType::I8 => "int8",
            DType::U8 => "uint8",
        }
    }

    /// Bytes of one element.
    pub fn size(self) -> usize {
        match self {
            DType::F32 | DType::I32 => 4,
            DType::I64 => 8,
            DType::Bool | DType::I8 | DType::U8 => 1,
        }
    }
}

/// The elements of an input, read-only.
#[derive(Debug, Clone, Copy)]
pub enum Data<'a> {
    /// `float32` elements.
    F32(&'a [f32]),
    /// `int64` elements.
    I64(&'a [i64]),
    /// `int32` elements.
    I32(&'a [i32]),
    /// `bool` elements, 0 or 1.
    Bool(&'a [u8]),
    /// `int8` elements.
    I8(&'a [i8]),
    /// `uint8` elements.
    U8(&'a [u8]),
}

impl Data<'_> {
    /// The element type.
    pub fn dtype(&self) -> DType {
        match self {
            Data::F32(_) => DType::F32,
            Data::I64(_) => DType::I64,
            Data::I32(_) => DType::I32,
            Data::Bool(_) => DType::Bool,
            Data::I8(_) => DType::I8,
            Data::U8(_) => DType::U8,
        }
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        match self {
            Data::F32(d) => d.len(),
            Data::I64(d) => d.len(),
            Data::I32(d) => d.len(),
            Data::Bool(d) => d.len(),
            Data::I8(d) => d.len(),
            Data::U8(d) => d.len(),
        }
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The elements of an output, writable.
#[derive(Debug)]
pub enum DataMut<'a> {
    /// `float32` elements.
    F32(&'a mut [f32]),
    /// `int64` elements.
    I64(&'a mut [i64]),
    /// `int32` elements.
    I32(&'a mut [i32]),
    /// `bool` elements, 0 or 1.
    Bool(&'a mut [u8]),
    /// `int8` elements.
    I8(&'a mut [i8]),
    /// `uint8` elements.
    U8(&'a mut [u8]),
}

impl DataMut<'_> {
    /// The element type.
    pub fn dtype(&self) -> DType {
        match self {
            DataMut::F32(_) => DType::F32,
            DataMut::I64(_) => DType::I64,
            DataMut::I32(_) => DType::I32,
            DataMut::Bool(_) => DType::Bool,
            DataMut::I8(_) => DType::I8,
            DataMut::U8(_) => DType::U8,
        }
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        match self {
            DataMut::F32(d) => d.len(),
            DataMut::I64(d) => d.len(),
            DataMut::I32(d) => d.len(),
            DataMut::Bool(d) => d.len(),
            DataMut::I8(d) => d.len(),
            DataMut::U8(d) => d.len(),
        }
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A read-only view of the same elements.
    pub fn as_data(&self) -> Data<'_> {
        match self {
            DataMut::F32(d) => Data::F32(d),
            DataMut::I64(d) => Data::I64(d),
            DataMut::I32(d) => Data::I32(d),
            DataMut::Bool(d) => Data::Bool(d),
            DataMut::I8(d) => Data::I8(d),
            DataMut::U8(d) => Data::U8(d),
        }
    }
}

/// One input of a node.
#[derive(Debug, Clone, Copy)]
pub enum Input<'a> {
    /// An optional input left out (`""` in ONNX).
    Absent,
    /// An activation, a weight or a constant.
    Value {
        /// Its shape.
        shape: &'a [usize],
        /// Its elements, row-major.
        data: Data<'a>,
    },
    /// The input's bytes are the buffer of `outputs[output]`: the operator runs in place, the
    /// output overwriting this input. On entry the output buffer holds the input's values; their
    /// element type is the output's.
    InPlace {
        /// The index of the output that shares this input's buffer.
        output: usize,
        /// The input's shape (same number of elements as the output).
        shape: &'a [usize],
    },
}

/// One output of a node: its static shape and its pre-sized buffer.
#[derive(Debug)]
pub struct Output<'a> {
    /// The shape, from ONNX shape inference.
    pub shape: &'a [usize],
    /// The elements to write, row-major.
    pub data: DataMut<'a>,
}

/// The number of elements of a tensor of `shape`, or an error on overflow.
pub(crate) fn numel(shape: &[usize]) -> Result<usize, KernelError> {
    shape
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .ok_or_else(|| error!("shape {shape:?} overflows"))
}

/// A shape of rank at most [`MAX_RANK`], or an error.
pub(crate) fn check_rank(shape: &[usize]) -> Result<(), KernelError> {
    if shape.len() > MAX_RANK {
        bail!(
            "shape {shape:?} has rank {}, more than the kernels' limit of {MAX_RANK}",
            shape.len()
        );
    }
    Ok(())
}

/// Checks that every view's slice has as many elements as its shape says, and that every
/// in-place input names an existing output of the same size.
pub(crate) fn check_views(inputs: &[Input<'_>], outputs: &[Output<'_>]) -> Result<(), KernelError> {
    for (i, input) in inputs.iter().enumerate() {
        match input {
            Input::Absent => {}
            Input::Value { shape, data } => {
                check_rank(shape)?;
                if numel(shape)? != data.len() {
                    bail!("input {i} has shape {shape:?} but {} elements", data.len());
                }
            }
            Input::InPlace { output, shape } => {
                check_rank(shape)?;
                let Some(out) = outputs.get(*output) else {
                    bail!("input {i} is in place on output {output}, which does not exist");
                };
                if numel(shape)? != numel(out.shape)? {
                    bail!(
                        "input {i} of shape {shape:?} is in place on output {output} of shape {:?}, a different size",
                        out.shape
                    );
                }
            }
        }
    }
    for (o, out) in outputs.iter().enumerate() {
        check_rank(out.shape)?;
        if numel(out.shape)? != out.data.len() {
            bail!(
                "output {o} has shape {:?} but {} elements",
                out.shape,
                out.data.len()
            );
        }
    }
    Ok(())
}

/// A Rust element type of a tensor.
pub(crate) trait Elem:
    bytemuck::Pod + PartialOrd + Default + core::fmt::Debug + 'static
{
    /// Its tensor type.
    const DTYPE: DType;
    /// The elements, if `data` holds this type.
    fn slice(data: Data<'_>) -> Option<&[Self]>;
    /// The elements, if `data` holds this type.
    fn slice_mut<'b>(data: &'b mut DataMut<'_>) -> Option<&'b mut [Self]>;
}

macro_rules! elem {
    ($t:ty, $variant:ident) => {
        impl Elem for $t {
            const DTYPE: DType = DType::$variant;
            fn slice(data: Data<'_>) -> Option<&[Self]> {
                match data {
                    Data::$variant(d) => Some(d),
                    _ => None,
                }
            }
            fn slice_mut<'b>(data: &'b mut DataMut<'_>) -> Option<&'b mut [Self]> {
                match data {
                    DataMut::$variant(d) => Some(d),
                    _ => None,
                }
            }
        }
    };
}
elem!(f32, F32);
elem!(i64, I64);
elem!(i32, I32);
// `u8` is the element of both `bool` and `uint8` tensors: the kernels generic over the element
// (the ones that move, compare or select elements) take either.
impl Elem for u8 {
    const DTYPE: DType = DType::Bool;
    fn slice(data: Data<'_>) -> Option<&[Self]> {
        match data {
            Data::Bool(d) | Data::U8(d) => Some(d),
            _ => None,
        }
    }
    fn slice_mut<'b>(data: &'b mut DataMut<'_>) -> Option<&'b mut [Self]> {
        match data {
            DataMut::Bool(d) | DataMut::U8(d) => Some(d),
            _ => None,
        }
    }
}
elem!(i8, I8);

/// Calls `$f::<T>($args)` with `T` the Rust type of dtype `$dtype`.
macro_rules! dispatch {
    ($dtype:expr, $f:ident ( $($arg:expr),* $(,)? )) => {
        match $dtype {
            $crate::tensor::DType::F32 => $f::<f32>($($arg),*),
            $crate::tensor::DType::I64 => $f::<i64>($($arg),*),
            $crate::tensor::DType::I32 => $f::<i32>($($arg),*),
            $crate::tensor::DType::Bool => $f::<u8>($($arg),*),
            $crate::tensor::DType::I8 => $f::<i8>($($arg),*),
            // uint8 moves through the byte type bool uses (see `Elem for u8`).
            $crate::tensor::DType::U8 => $f::<u8>($($arg),*),
        }
    };
}
pub(crate) use dispatch;

/// Where an elementwise operand's values are: a slice of its own, or the output buffer itself
/// (an in-place input, read at the same index as the element being written).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Operand<'a, T> {
    /// The input's own elements.
    Slice(&'a [T]),
    /// The output's buffer, which holds the input's values until overwritten.
    Out,
}

/// The input at `i`, `None` when absent or beyond the list.
pub(crate) fn present<'a>(inputs: &[Input<'a>], i: usize) -> Option<Input<'a>> {
    match inputs.get(i) {
        None | Some(Input::Absent) => None,
        Some(input) => Some(*input),
    }
}

/// The input at `i`, which must be present and not in place: its shape and data.
pub(crate) fn value<'a>(
    inputs: &[Input<'a>],
    i: usize,
) -> Result<(&'a [usize], Data<'a>), KernelError> {
    match opt_value(inputs, i)? {
        Some(v) => Ok(v),
        None => bail!("input {i} is required"),
    }
}

/// The input at `i` when present: its shape and data. In place is an error.
pub(crate) fn opt_value<'a>(
    inputs: &[Input<'a>],
    i: usize,
) -> Result<Option<(&'a [usize], Data<'a>)>, KernelError> {
    match present(inputs, i) {
        None => Ok(None),
        Some(Input::Value { shape, data }) => Ok(Some((shape, data))),
        Some(Input::InPlace { .. }) => bail!("input {i} cannot share its buffer with an output"),
        Some(Input::Absent) => unreachable!("`present` filters absent inputs"),
    }
}

/// The input at `i` as elements of type `T`; present, not in place.
pub(crate) fn typed<'a, T: Elem>(
    inputs: &[Input<'a>],
    i: usize,
) -> Result<(&'a [usize], &'a [T]), KernelError> {
    let (shape, data) = value(inputs, i)?;
    match T::slice(data) {
        Some(d) => Ok((shape, d)),
        None => bail!(
            "input {i} is {}, expected {}",
            data.dtype().name(),
            T::DTYPE.name()
        ),
    }
}

/// The input at `i` as an elementwise operand of type `T` writing output `out`: its own slice,
/// or the output buffer when it runs in place on that output.
pub(crate) fn operand<'a, T: Elem>(
    inputs: &[Input<'a>],
    i: usize,
    out: usize,
) -> Result<(&'a [usize], Operand<'a, T>), KernelError> {
    match present(inputs, i) {
        Some(Input::InPlace { output, shape }) if output == out => Ok((shape, Operand::Out)),
        Some(Input::InPlace { output, .. }) => {
            bail!("input {i} is in place on output {output}, expected output {out}")
        }
        _ => {
            let (shape, data) = typed::<T>(inputs, i)?;
            Ok((shape, Operand::Slice(data)))
        }
    }
}

/// The values of an integer input (int64 or int32) at `i`, when present: a shape, axes, pads...
/// At most [`MAX_INTS`] of them.
pub(crate) fn opt_ints(inputs: &[Input<'_>], i: usize) -> Result<Option<Ints>, KernelError> {
    match opt_value(inputs, i)? {
        None => Ok(None),
        Some((_, Data::I64(d))) => collect(d.iter().copied()).map(Some),
        Some((_, Data::I32(d))) => collect(d.iter().map(|&x| i64::from(x))).map(Some),
        Some((_, d)) => bail!("input {i} is {}, expected int64", d.dtype().name()),
    }
}

/// The single value of a one-element input at `i` converted to f32, when present.
pub(crate) fn opt_scalar_f32(inputs: &[Input<'_>], i: usize) -> Result<Option<f32>, KernelError> {
    let Some((shape, data)) = opt_value(inputs, i)? else {
        return Ok(None);
    };
    if data.len() != 1 {
        bail!("input {i} must hold one value, found shape {shape:?}");
    }
    // integer bounds of a float clip
    Ok(Some(match data {
        Data::F32(d) => d[0],
        Data::I64(d) => d[0] as f32,
        Data::I32(d) => d[0] as f32,
        Data::Bool(d) => f32::from(d[0]),
        Data::I8(d) => f32::from(d[0]),
        Data::U8(d) => f32::from(d[0]),
    }))
}

/// The output at `o` as `(shape, elements of type T)`.
pub(crate) fn output<'o, T: Elem>(
    outputs: &'o mut [Output<'_>],
    o: usize,
) -> Result<(&'o [usize], &'o mut [T]), KernelError> {
    let Some(out) = outputs.get_mut(o) else {
        bail!("output {o} is required");
    };
    let dtype = out.data.dtype();
    match T::slice_mut(&mut out.data) {
        Some(d) => Ok((out.shape, d)),
        None => bail!(
            "output {o} is {}, expected {}",
            dtype.name(),
            T::DTYPE.name()
        ),
    }
}

/// The dtype of output `o`.
pub(crate) fn out_dtype(outputs: &[Output<'_>], o: usize) -> Result<DType, KernelError> {
    match outputs.get(o) {
        Some(out) => Ok(out.data.dtype()),
        None => bail!("output {o} is required"),
    }
}

/// Resolves a possibly negative `axis` against `rank`.
pub(crate) fn axis(axis: i64, rank: usize) -> Result<usize, KernelError> {
    let r = i64::try_from(rank).map_err(|_| error!("rank overflows"))?;
    let a = if axis < 0 { axis + r } else { axis };
    if a < 0 || a >= r {
        bail!("axis {axis} is out of range for rank {rank}");
    }
    usize::try_from(a).map_err(|_| error!("axis {axis} is out of range for rank {rank}"))
}

/// Checks that a computed output shape is the one the caller sized.
pub(crate) fn expect_shape(
    o: usize,
    given: &[usize],
    computed: &[usize],
) -> Result<(), KernelError> {
    if given != computed {
        bail!("output {o} has shape {given:?}, the operator computes {computed:?}");
    }
    Ok(())
}

/// Row-major strides of `shape` (rank at most [`MAX_RANK`]; element counts that overflow are an
/// error).
pub(crate) fn strides(shape: &[usize]) -> Result<Dims, KernelError> {
    let mut s = dims_filled(1, shape.len())?;
    for d in (0..shape.len().saturating_sub(1)).rev() {
        s[d] = s[d + 1]
            .checked_mul(shape[d + 1])
            .ok_or_else(|| error!("shape {shape:?} overflows"))?;
    }
    Ok(s)
}

/// Copies input `i` into output `o` when they are separate buffers (nothing to do in place):
/// the body of the reshape-like operators, which change only the shape.
pub(crate) fn copy_input<T: Elem>(
    inputs: &[Input<'_>],
    i: usize,
    outputs: &mut [Output<'_>],
    o: usize,
) -> Result<(), KernelError> {
    let (in_shape, src) = operand::<T>(inputs, i, o)?;
    let (_, out) = output::<T>(outputs, o)?;
    if numel(in_shape)? != out.len() {
        bail!(
            "input {i} of shape {in_shape:?} does not fit output {o} of {} elements",
            out.len()
        );
    }
    if let Operand::Slice(s) = src {
        out.copy_from_slice(s);
    }
    Ok(())
}
