//! What a build is asked for: the options [`Network`](crate::Network)'s builder methods set,
//! read by the importers (`prepare`, `tflite`) and the planning they share.

/// What the builder's options set (see [`Network`](crate::Network)).
#[derive(Clone, Debug)]
pub(crate) struct Options {
    pub(crate) name: Option<String>,
    pub(crate) inplace: bool,
    pub(crate) alignment: u64,
    pub(crate) solver: Option<String>,
    pub(crate) nodes: Option<u64>,
    pub(crate) budget: Option<u64>,
    /// The most bytes the arena may take, met by writing outputs over inputs where the
    /// kernels can ([`crate::ram_budget`]).
    pub(crate) ram_budget: Option<u64>,
    /// The data cache whose size bands chains of convolutions ([`crate::cache_bands`]).
    pub(crate) cache_bytes: Option<u64>,
    pub(crate) io_in_arena: bool,
    pub(crate) plan_docs: bool,
    /// Build-time rewriting: BatchNormalization folded, biases and activations fused, weights
    /// packed (see [`Network::fuse`](crate::Network::fuse)).
    pub(crate) fuse: bool,
    /// `[[pools]]`: name, size, linker section.
    pub(crate) pools: Vec<(String, Option<u64>, Option<String>)>,
}
