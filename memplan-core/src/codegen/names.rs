//! Every name the generated code declares, checked against every other one in the same scope
//! and against the names it must not shadow, in one place: a model whose names would collide is
//! a located error here (so `memplan plan` refuses it too), never an unlocated rustc error.
//!
//! The scopes, as [`generate`](crate::codegen::generate) writes them:
//! - the caller's module: the model's module, beside the prelude and the primitive types;
//! - the model's module: with `[[pools]]`, a module and a `<Pool>Arena` alias per pool, beside
//!   `Arenas`, `len`, `op`, the tables' modules and the primitive types the code names bare;
//! - each `impl` block: an arena's `new`, `views`, tensor accessors and `op_<name>` views;
//! - each op view method: the op's app-owned (`external`) tensors are parameters, beside the
//!   locals that cut the arena (`rest`, `piece_<n>`).

use std::collections::BTreeMap;

use crate::error::InputError;
use crate::model_file::{Location, Model};

/// Type-namespace names of the Rust 2024 prelude (and its enum variants, which are in both
/// namespaces): a module named like one of them hides it from the code around it.
const PRELUDE: [&str; 43] = [
    "Copy",
    "Send",
    "Sized",
    "Sync",
    "Unpin",
    "Drop",
    "Fn",
    "FnMut",
    "FnOnce",
    "AsyncFn",
    "AsyncFnMut",
    "AsyncFnOnce",
    "Box",
    "ToOwned",
    "Clone",
    "PartialEq",
    "PartialOrd",
    "Eq",
    "Ord",
    "AsRef",
    "AsMut",
    "Into",
    "From",
    "Default",
    "Iterator",
    "Extend",
    "IntoIterator",
    "DoubleEndedIterator",
    "ExactSizeIterator",
    "Option",
    "Some",
    "None",
    "Result",
    "Ok",
    "Err",
    "String",
    "ToString",
    "Vec",
    "TryFrom",
    "TryInto",
    "FromIterator",
    "Future",
    "IntoFuture",
];

/// The primitive types: a module named like one hides the type (`pub mod u8` breaks `x: u8`).
const PRIMITIVES: [&str; 19] = [
    "bool", "char", "str", "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64",
    "i128", "isize", "f16", "f32", "f64", "f128",
];

/// Who declares a name: memplan itself (with what it is), or the model file at a place.
#[derive(Clone)]
enum Owner {
    Memplan(&'static str),
    Model { what: String, at: Location },
}

/// One scope's names in one namespace.
struct Scope {
    /// What the scope is, for messages ("the model's module `kws`").
    name: String,
    names: BTreeMap<String, Owner>,
}

impl Scope {
    fn new(name: String, fixed: &[(&str, &'static str)]) -> Self {
        let names = fixed
            .iter()
            .map(|&(name, what)| (name.to_owned(), Owner::Memplan(what)))
            .collect();
        Self { name, names }
    }

    /// Declares `name` for `what` at `at`; an error if the scope has it already.
    fn declare(
        &mut self,
        model: &Model,
        name: &str,
        what: String,
        at: Location,
    ) -> Result<(), InputError> {
        let Some(other) = self.names.get(name) else {
            self.names
                .insert(name.to_owned(), Owner::Model { what, at });
            return Ok(());
        };
        let (message, help) = match other {
            Owner::Memplan(item) => (
                format!(
                    "{what} generates `{name}`, which is already {item} in {}",
                    self.name
                ),
                "rename it: the generated code would not compile (or would hide that name from \
                 the code around it)"
                    .to_owned(),
            ),
            Owner::Model {
                what: first,
                at: first_at,
            } => (
                format!(
                    "{what} generates `{name}` in {}, as {first} does ({}:{}:{})",
                    self.name, model.file, first_at.line, first_at.column
                ),
                "rename one of them: the generated code would declare the name twice".to_owned(),
            ),
        };
        Err(InputError::new(
            &model.file,
            at.line,
            at.column,
            message,
            help,
        ))
    }
}

/// Checks every name the generated code of `model` declares (see the module docs): the first
/// collision is an error located at the model-file name that causes it.
pub(crate) fn check(model: &Model) -> Result<(), InputError> {
    // The caller's module: the model's module beside the prelude.
    let mut caller = Scope::new("the code that calls `memplan!`".to_owned(), &[]);
    for name in PRELUDE {
        caller
            .names
            .insert(name.to_owned(), Owner::Memplan("a name of Rust's prelude"));
    }
    for name in PRIMITIVES {
        caller
            .names
            .insert(name.to_owned(), Owner::Memplan("a primitive type"));
    }
    caller.declare(
        model,
        &model.name,
        format!("the model's name `{}` (its module)", model.name),
        model.locations.name,
    )?;

    let module = format!("the model's module `{}`", model.name);
    let several = !model.pools.is_empty();
    let tensor_at = |t: usize| model.tensors[t].location;

    // The model's module, type namespace: with pools, a module and an alias per pool.
    if several {
        let mut fixed: Vec<(&str, &'static str)> = vec![
            ("len", "the module of element counts"),
            ("op", "the module of op view structs"),
            ("offset", "a pool module's offsets module"),
            ("shape", "the module of tensor shapes"),
            ("dtype", "the module of tensor dtypes"),
            ("weight_shape", "the module of weight shapes"),
            ("weight_dtype", "the module of weight dtypes"),
            ("attrs", "the module of op attributes"),
            ("Arenas", "the struct holding every pool's arena"),
            ("__memplan", "the alias of `memplan::__private`"),
        ];
        fixed.extend(PRELUDE.map(|n| (n, "a name of Rust's prelude, which the code may use")));
        fixed.extend(PRIMITIVES.map(|n| (n, "a primitive type the code uses bare")));
        let mut types = Scope::new(module.clone(), &fixed);
        for pool in &model.pools {
            types.declare(
                model,
                &pool.name,
                format!("pool `{}` (its module)", pool.name),
                pool.location,
            )?;
            let alias = format!("{}Arena", camel(&pool.name));
            types.declare(
                model,
                &alias,
                format!("pool `{}` (its arena type alias `{alias}`)", pool.name),
                pool.location,
            )?;
        }
    }

    // The arenas' methods: accessors (arena tensors), `new`, `views` and the op views.
    let accessors = |scope: &mut Scope| -> Result<(), InputError> {
        for (t, tensor) in model.tensors.iter().enumerate() {
            if !tensor.memory.external {
                scope.declare(
                    model,
                    &tensor.name,
                    format!("tensor `{}` (its accessor method)", tensor.name),
                    tensor_at(t),
                )?;
            }
        }
        Ok(())
    };
    let op_methods = |scope: &mut Scope| -> Result<(), InputError> {
        for op in &model.ops {
            scope.declare(
                model,
                &format!("op_{}", op.name),
                format!("op `{}` (its view method `op_{}`)", op.name, op.name),
                op.location,
            )?;
        }
        Ok(())
    };
    let fixed_methods = [
        ("new", "the arena's constructor `new`"),
        ("views", "the views-by-index method `views`"),
    ];
    if several {
        let mut arenas = Scope::new("the methods of `Arenas`".to_owned(), &fixed_methods);
        op_methods(&mut arenas)?;
        // A pool's accessors are on its own `Arena`; which pool a tensor lands in is the
        // planner's choice unless bound, so every arena tensor is checked against `new` alone.
        let mut pool_arena = Scope::new(
            "the methods of a pool's `Arena`".to_owned(),
            &[("new", "the arena's constructor `new`")],
        );
        accessors(&mut pool_arena)?;
    } else {
        let mut arena = Scope::new("the methods of `Arena`".to_owned(), &fixed_methods);
        accessors(&mut arena)?;
        op_methods(&mut arena)?;
    }

    // Names in pattern position (parameters, `let`) in the model's module: a constant (or a
    // prelude variant) of that name would be matched instead of bound. App-owned tensors are
    // the op views' parameters; pools are `take`'s and `Arenas::new`'s.
    let mut constants: Vec<(&str, &'static str)> = vec![
        ("STEPS", "the constant `STEPS`"),
        ("TENSOR_INFO", "the table `TENSOR_INFO`"),
        ("WEIGHTS", "the table `WEIGHTS`"),
        ("OPS", "the table `OPS`"),
        ("MAX_VIEWS", "the constant `MAX_VIEWS`"),
        ("Some", "a variant of Rust's prelude"),
        ("None", "a variant of Rust's prelude"),
        ("Ok", "a variant of Rust's prelude"),
        ("Err", "a variant of Rust's prelude"),
    ];
    if !several {
        constants.extend([
            ("ARENA_SIZE", "the constant `ARENA_SIZE`"),
            ("ARENA_ALIGN", "the constant `ARENA_ALIGN`"),
            ("LOWER_BOUND", "the constant `LOWER_BOUND`"),
            ("TENSORS", "the table `TENSORS`"),
        ]);
    }
    let bindings = Scope::new(
        format!("{module} (where it is a parameter or local)"),
        &constants,
    );
    let check_binding = |name: &str, what: String, at: Location| {
        let mut scope = Scope {
            name: bindings.name.clone(),
            names: bindings.names.clone(),
        };
        scope.declare(model, name, what, at)
    };
    for pool in &model.pools {
        check_binding(
            &pool.name,
            format!(
                "pool `{}` (a parameter of `take` and `Arenas::new`)",
                pool.name
            ),
            pool.location,
        )?;
    }
    for (t, tensor) in model.tensors.iter().enumerate() {
        if tensor.memory.external {
            check_binding(
                &tensor.name,
                format!(
                    "app-owned tensor `{}` (a parameter of its ops' views)",
                    tensor.name
                ),
                tensor_at(t),
            )?;
        }
    }

    // Each op view method: app-owned tensors are parameters beside the cutting locals.
    for op in &model.ops {
        for &t in op.inputs.iter().chain(&op.outputs).chain(&op.scratch) {
            let tensor = &model.tensors[t];
            let name = tensor.name.as_str();
            let piece = name
                .strip_prefix("piece_")
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
            if tensor.memory.external && (name == "rest" || piece) {
                return Err(InputError::new(
                    &model.file,
                    tensor_at(t).line,
                    tensor_at(t).column,
                    format!(
                        "app-owned tensor `{name}` is a parameter of op `{}`'s view method, \
                         where `{name}` is already a local of the generated code (the pieces \
                         cut from the arena)",
                        op.name
                    ),
                    "rename the tensor",
                ));
            }
        }
    }
    Ok(())
}

/// `sram` -> `Sram`, `fast_mem` -> `FastMem`.
pub(crate) fn camel(name: &str) -> String {
    name.split('_')
        .filter(|part| !part.is_empty())
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map_or(String::new(), |first| {
                first.to_ascii_uppercase().to_string() + chars.as_str()
            })
        })
        .collect()
}
