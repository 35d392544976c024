//! The builder a build script calls: `Network::from_onnx(path).name("kws").generate()`.

use std::path::{Path, PathBuf};

use crate::emit::{self, BlobPath};
use crate::error::Error;
use crate::graph::Prepared;
use crate::onnx;
use crate::options::Options;

/// A network to generate code for, from an ONNX file.
///
/// ```no_run
/// // build.rs
/// fn main() -> Result<(), memplan_build::Error> {
///     memplan_build::Network::from_onnx("models/kws.onnx").name("kws").generate()?;
///     Ok(())
/// }
/// ```
///
/// `generate` writes `$OUT_DIR/<name>.rs` (included by `memplan::include_network!("<name>")`),
/// `<name>.weights.bin` (the constants, which that file `include_bytes!`s) and `<name>.toml` (the
/// model file it was planned from, for `memplan plan`), and tells cargo to rerun the build
/// script when the ONNX file (or its external data) changes.
#[derive(Clone, Debug)]
pub struct Network {
    source: PathBuf,
    format: Format,
    options: Options,
    out_dir: Option<PathBuf>,
    rerun_if_changed: bool,
}

/// What [`Network::generate`] wrote and planned.
#[derive(Clone, Debug)]
pub struct Generated {
    /// The module's name.
    pub name: String,
    /// The Rust file written (`<out_dir>/<name>.rs`).
    pub rust: PathBuf,
    /// The weight blob written (`<out_dir>/<name>.weights.bin`).
    pub weights: PathBuf,
    /// The model file written (`<out_dir>/<name>.toml`).
    pub model: PathBuf,
    /// Bytes of the arena (every pool together).
    pub arena_size: u64,
    /// The most bytes live at one step with the plan's in-place pairs sharing memory: the bound
    /// the plan is measured against.
    pub lower_bound: u64,
    /// The most bytes live at one step with no tensor sharing another's memory.
    pub bound_without_sharing: u64,
    /// Bytes of the constants (the blob, with padding).
    pub weight_bytes: u64,
    /// Files the build read besides the ONNX file (external weight data).
    pub inputs_read: Vec<PathBuf>,
    /// The graph inputs, in graph order (the first parameters of `run`).
    pub inputs: Vec<Io>,
    /// The graph outputs, in graph order (the last parameters of `run`).
    pub outputs: Vec<Io>,
}

/// A graph input or output: a parameter of the generated `run`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Io {
    /// The parameter's name (snake_case of the ONNX name; also `len::<name>`).
    pub name: String,
    /// The ONNX value's name.
    pub onnx: String,
    /// The Rust element type (`f32`, `i64`, `i32`, `u8` for bool).
    pub rust_type: &'static str,
    /// Number of elements.
    pub elements: u64,
}

/// The file format a network is read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Onnx,
    Tflite,
}

impl Network {
    /// The network in the ONNX file at `path`; a relative path is relative to the working
    /// directory, which for a build script is the crate's root.
    pub fn from_onnx(path: impl AsRef<Path>) -> Self {
        Self::new(path.as_ref(), Format::Onnx)
    }

    /// The network in subgraph 0 of the TensorFlow Lite file at `path` (float32, int8 or hybrid;
    /// NHWC as in the file), run by the kernels' `tflite.*` operators: the int8 ones compute what
    /// LiteRT's reference kernels compute, bit for bit, with every multiplier, shift and table
    /// computed here at build time. [`TFLITE_BUILTINS`](crate::TFLITE_BUILTINS) lists the
    /// operators; any other is a build error naming it.
    pub fn from_tflite(path: impl AsRef<Path>) -> Self {
        Self::new(path.as_ref(), Format::Tflite)
    }

    /// The network in the file at `path`: TensorFlow Lite for a `.tflite` name, ONNX for an
    /// `.onnx` name; any other name is TensorFlow Lite if the file says it is one (`TFL3` at
    /// bytes 4..8), ONNX otherwise. The extension comes first: an ONNX file whose producer's
    /// name starts with `TFL3` has those bytes there too.
    pub fn from_file(path: impl AsRef<Path>) -> Self {
        let path = path.as_ref();
        // The first 8 bytes, for a file named neither `.tflite` nor `.onnx` (none if unreadable:
        // ONNX, whose reader then says what is wrong).
        let mut head = [0u8; 8];
        let read = std::fs::File::open(path)
            .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head))
            .is_ok();
        let head = if read { &head[..] } else { &[] };
        let tflite = memplan_tflite::is_tflite(path, head);
        Self::new(path, if tflite { Format::Tflite } else { Format::Onnx })
    }

    fn new(path: &Path, format: Format) -> Self {
        Self {
            source: path.to_path_buf(),
            format,
            options: Options {
                name: None,
                inplace: true,
                alignment: memplan_core::model_file::DEFAULT_ALIGNMENT,
                solver: None,
                nodes: None,
                budget: None,
                ram_budget: None,
                cache_bytes: None,
                io_in_arena: false,
                plan_docs: true,
                fuse: true,
                pools: Vec::new(),
            },
            out_dir: None,
            rerun_if_changed: true,
        }
    }

    /// The generated module's name (a Rust identifier); default: the file name up to its first
    /// `.`, in snake_case.
    #[must_use]
    pub fn name(mut self, name: &str) -> Self {
        self.options.name = Some(name.to_owned());
        self
    }

    /// Whether ops may write their output over an input that dies there (default: on).
    #[must_use]
    pub fn inplace(mut self, on: bool) -> Self {
        self.options.inplace = on;
        self
    }

    /// Alignment of every tensor's offset in the arena, in bytes (default 64).
    #[must_use]
    pub fn alignment(mut self, bytes: u64) -> Self {
        self.options.alignment = bytes;
        self
    }

    /// The planner: `auto` (default), `exact`, `patent`, `best-fit`, `first-fit`, ... as in a
    /// model file's `solver`.
    #[must_use]
    pub fn solver(mut self, solver: &str) -> Self {
        self.options.solver = Some(solver.to_owned());
        self
    }

    /// The exact search's budget, in nodes (a model file's `nodes`).
    #[must_use]
    pub fn nodes(mut self, nodes: u64) -> Self {
        self.options.nodes = Some(nodes);
        self
    }

    /// The most bytes the arena may take: a plan above it fails the build, saying why.
    #[must_use]
    pub fn budget(mut self, bytes: u64) -> Self {
        self.options.budget = Some(bytes);
        self
    }

    /// The most bytes the arena may take, which the build meets by choosing how the network
    /// runs (without it nothing changes). When the plan of whole tensors is larger, the build
    /// has int8 kernels write their output over their own input where they can (a pointwise
    /// convolution pixel by pixel; a depthwise convolution through a ring of a few output rows
    /// planned in the arena; ADD, SUB and MUL of one shape element by element), the same bytes
    /// for no extra arithmetic; then, if that is not enough, runs a chain of two to six int8
    /// convolutions band by band, each tensor between them held as the few rows the next one
    /// still reads (every row computed once); and keeps only what it needs. `ARENA_SIZE` is then at most `bytes` (graph inputs and
    /// outputs are the caller's buffers, outside it), or the build fails saying the least arena
    /// it can reach. The generated module's `network::WRITTEN_IN_PLACE` and `BAND_BY_BAND` list
    /// what was chosen.
    #[must_use]
    pub fn ram_budget(mut self, bytes: u64) -> Self {
        self.options.ram_budget = Some(bytes);
        self
    }

    /// The data cache the network runs with, in bytes (a host core's L2; without it nothing
    /// changes): where a chain of convolutions passes a tensor larger than `bytes` from one to
    /// the next (a MobileNet's expansion at 112 x 112), the chain runs band by band, each tensor
    /// between them held as the few rows the next one still reads, so that it is written and
    /// read again while still in the cache rather than through memory. The bands are the
    /// tallest whose buffers take at most half of `bytes`. Every row is computed once by the
    /// same kernels: the same bytes out, an arena no larger, a few more calls. The generated
    /// module's `network::BAND_BY_BAND` lists the stages. Under a
    /// [`ram_budget`](Self::ram_budget) the whole-tensor plan does not meet, the budget decides
    /// instead.
    #[must_use]
    pub fn cache_bytes(mut self, bytes: u64) -> Self {
        self.options.cache_bytes = Some(bytes);
        self
    }

    /// Graph inputs and outputs in the arena too (default off: they are the caller's buffers,
    /// passed to `run`, and take no arena space). With it on, `run` copies the inputs in and the
    /// outputs out.
    #[must_use]
    pub fn io_in_arena(mut self, on: bool) -> Self {
        self.options.io_in_arena = on;
        self
    }

    /// Whether the module's docs hold the planner's report (the plan as a table and a picture;
    /// default on).
    #[must_use]
    pub fn plan_docs(mut self, on: bool) -> Self {
        self.options.plan_docs = on;
        self
    }

    /// Whether the build rewrites the graph before planning it (default on): each
    /// BatchNormalization after a Conv folded into the Conv's weights and bias, each constant
    /// `Add` after a MatMul into the MatMul as a bias, each activation (Relu, Clip, HardSigmoid,
    /// HardSwish, LeakyRelu, Sigmoid; SiLU and GELU as PyTorch exports them, two and five nodes)
    /// after a Conv, Gemm or MatMul into that node, and the
    /// constant weights of Conv, ConvTranspose, Gemm and MatMul packed into the panels the matrix
    /// product reads
    /// (stored so in the weight blob). Fewer nodes, fewer tensors, no packing at run time; off,
    /// the network runs node for node as in the file.
    #[must_use]
    pub fn fuse(mut self, on: bool) -> Self {
        self.options.fuse = on;
        self
    }

    /// A memory pool the planner may use, fastest first (a model file's `[[pools]]`): `size` the
    /// most bytes its arena may take (`None` for no limit). With pools, the module has one arena
    /// per pool, `Arenas` holds them all, `take()` hands them out, and `run` takes `&mut
    /// Arenas`. A tensor goes to the first pool with room.
    #[must_use]
    pub fn pool(mut self, name: &str, size: Option<u64>) -> Self {
        self.options.pools.push((name.to_owned(), size, None));
        self
    }

    /// [`Network::pool`] whose memory is in the linker section `section` (SRAM banks, DTCM):
    /// the generated code places nothing in a section itself; you declare the pool's memory,
    /// `#[unsafe(link_section = "<section>")] static SRAM: net::<pool>::Memory =
    /// net::<pool>::Memory::zeroed();`, and pass it to `take(&SRAM)`, so the `unsafe` of choosing
    /// a section is in your code.
    #[must_use]
    pub fn pool_in_section(mut self, name: &str, size: Option<u64>, section: &str) -> Self {
        self.options
            .pools
            .push((name.to_owned(), size, Some(section.to_owned())));
        self
    }

    /// Where to write (default: `$OUT_DIR`).
    #[must_use]
    pub fn out_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.out_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Whether `generate` prints `cargo::rerun-if-changed` for the files it reads (default on).
    #[must_use]
    pub fn emit_rerun_if_changed(mut self, on: bool) -> Self {
        self.rerun_if_changed = on;
        self
    }

    /// Plans the network and writes its code (see [`Network`]).
    ///
    /// # Errors
    /// Anything the model gets wrong (an unsupported operator or dtype, a dynamic shape, a
    /// missing weight, a plan over the budget), naming the node or value and saying what to do;
    /// or a file that cannot be read or written.
    pub fn generate(self) -> Result<Generated, Error> {
        if self.rerun_if_changed {
            println!("cargo::rerun-if-changed={}", self.source.display());
        }
        let prepared = match self.format {
            Format::Onnx => onnx::prepare(&self.source, &self.options),
            Format::Tflite => crate::tflite::prepare(&self.source, &self.options),
        }
        .map_err(|message| Error::new(&self.source, message))?;
        if self.rerun_if_changed {
            for file in &prepared.files {
                println!("cargo::rerun-if-changed={}", file.display());
            }
        }
        let (out_dir, blob_path) = match &self.out_dir {
            Some(dir) => (dir.clone(), None),
            None => match std::env::var_os("OUT_DIR") {
                Some(dir) => (PathBuf::from(dir), Some(())),
                None => {
                    return Err(Error::new(
                        &self.source,
                        "OUT_DIR is not set\n  = help: call `generate` from a build script, or give a directory with `.out_dir(..)`".to_owned(),
                    ));
                }
            },
        };
        let name = prepared.model.name.clone();
        let rust = out_dir.join(format!("{name}.rs"));
        let weights = out_dir.join(format!("{name}.weights.bin"));
        let model = out_dir.join(format!("{name}.toml"));
        let blob_path = match blob_path {
            Some(()) => BlobPath::OutDir(format!("{name}.weights.bin")),
            None => BlobPath::Absolute(
                std::path::absolute(&weights)
                    .unwrap_or_else(|_| weights.clone())
                    .display()
                    .to_string(),
            ),
        };
        let source = code(&prepared, &blob_path, &self.source, self.options.plan_docs)
            .map_err(|message| Error::new(&self.source, message))?;
        let (blob, _) = emit::blob(&prepared);
        let io = |path: &Path, bytes: &[u8]| {
            crate::output::write(path, bytes).map_err(|e| Error::new(&self.source, e.to_string()))
        };
        io(&weights, &blob)?;
        io(&model, prepared.toml.as_bytes())?;
        io(&rust, source.as_bytes())?;
        Ok(Generated {
            name,
            rust,
            weights,
            model,
            arena_size: prepared.plan.total_arena_size(),
            lower_bound: prepared
                .plan
                .pools
                .iter()
                .map(|p| p.lower_bound)
                .max()
                .unwrap_or(0),
            bound_without_sharing: prepared.bound_without_sharing,
            weight_bytes: blob.len() as u64,
            inputs_read: prepared.files.clone(),
            inputs: parameters(&prepared, &prepared.model.inputs),
            outputs: parameters(&prepared, &prepared.model.outputs),
        })
    }
}

/// The parameters of `run` for `values`.
fn parameters(prepared: &Prepared, values: &[usize]) -> Vec<Io> {
    values
        .iter()
        .map(|&t| {
            let tensor = &prepared.model.tensors[t];
            Io {
                name: tensor.name.clone(),
                onnx: tensor.source.clone().unwrap_or_else(|| tensor.name.clone()),
                rust_type: tensor.rust_type(),
                elements: tensor.len(),
            }
        })
        .collect()
}

/// The Rust source of the network's module.
fn code(prepared: &Prepared, blob: &BlobPath, source: &Path, docs: bool) -> Result<String, String> {
    // One table per network: the kernels' (`network::{VALUES, CONSTANTS, NODES}`, which `run`'s
    // nodes are and the heap interpreter reads), not also core's `OPS`/`TENSOR_INFO`.
    let plan_tokens = memplan_core::codegen::generate_with(
        &prepared.model,
        &prepared.plan,
        memplan_core::codegen::Tables::Named,
    );
    let (bytes, offsets) = emit::blob(prepared);
    let file = source.file_name().map_or_else(
        || source.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let items = emit::network_items(prepared, &offsets, bytes.len(), blob, &file);
    let module = emit::module(plan_tokens, &items, docs)?;
    Ok(format!(
        "// Generated by memplan-build from `{file}`: do not edit.\n{module}"
    ))
}
