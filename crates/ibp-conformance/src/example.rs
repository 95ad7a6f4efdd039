//! `spec/example.md`: a small complete file, hex-dumped and annotated field by field.

/// The Markdown text of `spec/example.md`.
pub fn example_markdown() -> String {
    String::new()
}
