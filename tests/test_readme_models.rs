//! Every whole model file the README and the user guide show (a TOML block with `[model]`,
//! `[tensors]` and `[[ops]]`) is one a newcomer can copy: it parses and plans, as `memplan!`
//! and `memplan plan` would. The README's "The model file" example once had a graph output no
//! op produced, so the first thing a newcomer copied failed to build.

use std::path::Path;

/// The TOML blocks of a Markdown file, each with the line its text starts on; a block indented
/// under a list item is dedented by its fence's indentation.
fn toml_blocks(markdown: &str) -> Vec<(usize, String)> {
    let mut blocks = Vec::new();
    let mut open: Option<(usize, usize, String)> = None; // (line, indent, text)
    for (index, line) in markdown.lines().enumerate() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        match open.take() {
            None if trimmed == "```toml" => open = Some((index + 2, indent, String::new())),
            None => {}
            Some((start, _, text)) if trimmed == "```" => blocks.push((start, text)),
            Some((start, fence, mut text)) => {
                text.push_str(line.get(fence.min(indent)..).unwrap_or(""));
                text.push('\n');
                open = Some((start, fence, text));
            }
        }
    }
    assert!(open.is_none(), "a ```toml block is not closed");
    blocks
}

fn is_whole_model(text: &str) -> bool {
    ["[model]", "[tensors]", "[[ops]]"]
        .iter()
        .all(|table| text.lines().any(|line| line.starts_with(table)))
}

fn models_of(file: &str) -> Vec<(String, String)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    let markdown = std::fs::read_to_string(&path).unwrap();
    toml_blocks(&markdown)
        .into_iter()
        .filter(|(_, text)| is_whole_model(text))
        .map(|(line, text)| (format!("{file}:{line}"), text))
        .collect()
}

fn plans(place: &str, text: &str) -> Result<(), String> {
    let model = memplan_core::parse_model(place, text).map_err(|error| error.to_string())?;
    memplan_core::model_plan::plan_model(&model)
        .map(|_| ())
        .map_err(|error| error.to_string())
}

#[test]
fn every_model_the_docs_show_plans() {
    let mut models = models_of("README.md");
    let in_readme = models.len();
    models.extend(models_of("docs/user-guide.md"));
    // Getting started, The model file, the pools example; the user guide's tiny model.
    assert!(in_readme >= 3, "README: {in_readme} whole models found");
    assert!(models.len() > in_readme, "the user guide's model not found");
    let failures: Vec<String> = models
        .iter()
        .filter_map(|(place, text)| plans(place, text).err().map(|e| format!("{place}: {e}")))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn a_model_with_an_unproduced_output_is_caught() {
    let markdown = "text\n\n   ```toml\n   [model]\n   name = \"m\"\n   outputs = [\"y\"]\n\n   \
                    [tensors]\n   y = { bytes = 4 }\n\n   [[ops]]\n   name = \"a\"\n   \
                    inputs = []\n   outputs = []\n   ```\n";
    let blocks = toml_blocks(markdown);
    assert_eq!(blocks.len(), 1);
    let (line, text) = &blocks[0];
    assert_eq!(*line, 4);
    assert!(text.starts_with("[model]\nname = \"m\"\n"), "{text}");
    assert!(is_whole_model(text));
    let error = plans("m.toml", text).unwrap_err();
    assert!(error.contains("never produced"), "{error}");
}
