//! Problems found in a graph, each naming the node and field it concerns.
//!
//! Two severities. An **error** makes the file unusable as a whole (malformed JSON, an unknown
//! node type, a parameter out of range, a cycle): loading refuses it. A **warning** makes one
//! node *incomplete* (a required input left unwired, a wire to a node or port that does not
//! exist, a height wired into a mask input) or leaves one output pointing nowhere: the graph
//! still loads, saves and round-trips — an unfinished graph is a document, not an error — and
//! only the outputs that depend on the incomplete part cannot be built.

use std::fmt;

/// How serious a problem is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// The graph cannot be used at all.
    Error,
    /// One node is incomplete (or one output points nowhere); the rest of the graph works.
    Warning,
}

/// One problem in a graph.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Diagnostic {
    /// The node concerned, if any.
    pub node: Option<String>,
    /// The field concerned, as a dotted path (`params.octaves`, `inputs.a`, `world.size_m`).
    pub field: String,
    pub message: String,
    pub severity: Severity,
}

impl Diagnostic {
    /// An error.
    #[must_use]
    pub fn at(node: Option<&str>, field: String, message: String) -> Self {
        Self {
            node: node.map(str::to_owned),
            field,
            message,
            severity: Severity::Error,
        }
    }

    /// A warning: the node (or output) it names is incomplete.
    #[must_use]
    pub fn warning(node: Option<&str>, field: String, message: String) -> Self {
        Self {
            severity: Severity::Warning,
            ..Self::at(node, field, message)
        }
    }

    #[must_use]
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// The problem without the node: `inputs.in: required height input is not connected`.
    #[must_use]
    pub fn detail(&self) -> String {
        if self.field.is_empty() {
            self.message.clone()
        } else {
            format!("{}: {}", self.field, self.message)
        }
    }
}

/// `text` with control characters other than a line break escaped (`\u{1b}`): names and
/// values a stranger wrote reach the terminal as text, never as escape sequences.
#[must_use]
pub fn escape_control(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(|c| c.is_control() && c != '\n') {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut s = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() && c != '\n' {
            s.extend(c.escape_default());
        } else {
            s.push(c);
        }
    }
    std::borrow::Cow::Owned(s)
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.severity == Severity::Warning {
            f.write_str("warning: ")?;
        }
        if let Some(n) = &self.node {
            write!(f, "node \"{}\": ", escape_control(n))?;
        }
        f.write_str(&escape_control(&self.detail()))
    }
}

/// All problems found in one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostics {
    /// The file (as given by the user), or a label like `<memory>`.
    pub file: String,
    pub items: Vec<Diagnostic>,
}

/// Problems without a file, one per line (an evaluation's or a plan's refusal).
#[must_use]
pub fn lines(items: &[Diagnostic]) -> String {
    items
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.items.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{}: {d}", escape_control(&self.file))?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}
