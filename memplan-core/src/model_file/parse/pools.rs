//! The `[[pools]]` tables: each memory pool's name, size and `link_section`, fastest first.

use toml::Spanned;
use toml::de::DeValue;

use super::{Parser, Result, Value};
use crate::model_file::PoolDecl;

const POOL_KEYS: [&str; 3] = ["name", "size", "link_section"];

/// Names the generated module already uses, so no pool may take them.
const RESERVED_POOL_NAMES: [&str; 9] = [
    "__memplan",
    "offset",
    "len",
    "op",
    "shape",
    "dtype",
    "weight_shape",
    "weight_dtype",
    "attrs",
];

/// The largest `link_section` name accepted.
const MAX_SECTION_NAME: usize = 64;

/// Sections the loader, the start-up code or the code itself depend on: an arena there runs as
/// code, is executed before `main`, makes code or constants writable, or is thrown away. A
/// `link_section` equal to one of these or starting with one is refused.
const FORBIDDEN_SECTIONS: [&str; 34] = [
    ".init_array",
    ".fini_array",
    ".preinit_array",
    ".ctors",
    ".dtors",
    ".init",
    ".fini",
    ".text",
    ".rodata",
    ".plt",
    ".got",
    ".data.rel.ro",
    ".tdata",
    ".tbss",
    ".eh_frame",
    ".gcc_except_table",
    ".debug",
    ".zdebug",
    ".interp",
    ".dynamic",
    ".dynsym",
    ".dynstr",
    ".hash",
    ".gnu",
    ".rel",
    ".note",
    ".symtab",
    ".strtab",
    ".shstrtab",
    ".comment",
    ".ARM.exidx",
    ".ARM.extab",
    ".isr_vector",
    ".vector",
];

/// Why `section` may not hold an arena, or `None` if it may: a conservative charset (ASCII
/// letters, digits, `.`, `_`, `$`, and `,` for Mach-O `segment,section`), at most 64 characters,
/// none of [`FORBIDDEN_SECTIONS`] nor Mach-O's `__TEXT` segment.
pub(crate) fn link_section_problem(section: &str) -> Option<String> {
    if section.is_empty() {
        return Some("is empty".into());
    }
    if section.chars().count() > MAX_SECTION_NAME {
        return Some(format!("is longer than {MAX_SECTION_NAME} characters"));
    }
    if let Some(c) = section
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '$' | ',')))
    {
        return Some(format!(
            "contains {c:?}; a section name may only use ASCII letters, digits, `.`, `_`, `$` \
             and `,`"
        ));
    }
    if let Some(forbidden) = FORBIDDEN_SECTIONS.iter().find(|f| section.starts_with(**f)) {
        return Some(format!(
            "is (or starts with) `{forbidden}`, a section the program's loader, start-up code \
             or code depends on: an arena there would be run, made of code or constants, or \
             thrown away"
        ));
    }
    if section.starts_with("__TEXT") {
        return Some("is in Mach-O's `__TEXT` segment, which holds code and constants".into());
    }
    None
}

impl Parser<'_> {
    pub(super) fn pools(&self, value: &Value<'_>) -> Result<Vec<PoolDecl>> {
        let help = "write each pool as a `[[pools]]` table with `name` and optionally `size` and \
                    `link_section`, fastest first";
        let DeValue::Array(items) = value.get_ref() else {
            return Err(self.source.error(
                &value.span(),
                "`pools` is not an array of tables",
                help,
            ));
        };
        let mut pools: Vec<PoolDecl> = Vec::with_capacity(items.len());
        for (k, item) in items.iter().enumerate() {
            let table = self.table(item, &format!("the pool at index {k} of `pools`"), help)?;
            let named = match table.get("name").map(Spanned::get_ref) {
                Some(DeValue::String(name)) => format!("pool `{name}` (index {k})"),
                _ => format!("the pool at index {k}"),
            };
            self.check_keys(table, &POOL_KEYS, &format!("in {named}"), |_| {
                "a pool has `name`, and optionally `size` and `link_section`".into()
            })?;
            let Some(name_value) = table.get("name") else {
                return Err(self.source.error(
                    &item.span(),
                    format!("the pool at index {k} (counting `[[pools]]` from 0) has no `name`"),
                    "add `name = \"sram\"`: it names the pool's module and arena type",
                ));
            };
            let name = self.string(name_value, "pool `name`")?;
            self.identifier(
                name,
                &name_value.span(),
                "pool name",
                "it names the pool's module",
            )?;
            if RESERVED_POOL_NAMES.contains(&name) {
                return Err(self.source.error(
                    &name_value.span(),
                    format!("pool name `{name}` clashes with the generated module `{name}`"),
                    "rename the pool (for example `sram`, `dram`, `tcm`)",
                ));
            }
            let camel = |n: &str| {
                n.split('_')
                    .map(str::to_ascii_lowercase)
                    .collect::<String>()
            };
            if let Some(other) = pools
                .iter()
                .find(|p| p.name != name && camel(&p.name) == camel(name))
            {
                return Err(self.source.error(
                    &name_value.span(),
                    format!(
                        "pool names `{}` and `{name}` give the same arena type name",
                        other.name
                    ),
                    "rename one of them so they differ in more than `_` and case",
                ));
            }
            if pools.iter().any(|p| p.name == name) {
                return Err(self.source.error(
                    &name_value.span(),
                    format!("duplicate pool name `{name}`"),
                    "give every pool a unique name",
                ));
            }
            let capacity = match table.get("size") {
                None => None,
                Some(v) => {
                    let size = self.byte_count(v, &format!("`size` of pool `{name}`"))?;
                    if size == 0 {
                        return Err(self.source.error(
                            &v.span(),
                            format!("pool `{name}` has `size = 0`"),
                            "give the most bytes the pool may take (e.g. `size = \"64 KiB\"`), or \
                             remove `size` for no limit",
                        ));
                    }
                    Some(size)
                }
            };
            let link_section = match table.get("link_section") {
                None => None,
                Some(v) => {
                    let section = self.string(v, &format!("`link_section` of pool `{name}`"))?;
                    if let Some(problem) = link_section_problem(section) {
                        return Err(self.source.error(
                            &v.span(),
                            format!("`link_section` {section:?} of pool `{name}` {problem}"),
                            "name a data section of your memory map that the linker script \
                             places in the pool's memory, e.g. `link_section = \".sram\"` or \
                             `\".bss.dtcm\"`",
                        ));
                    }
                    Some(section.to_owned())
                }
            };
            pools.push(PoolDecl {
                name: name.to_owned(),
                capacity,
                link_section,
                location: self.source.location(item.span().start),
                size_location: table
                    .get("size")
                    .map(|v| self.source.location(v.span().start)),
            });
        }
        if pools.is_empty() {
            return Err(self.source.error(
                &value.span(),
                "`pools` is empty",
                "declare at least one `[[pools]]` table, or remove `pools` for one default arena",
            ));
        }
        Ok(pools)
    }
}
