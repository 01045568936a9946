//! Problems found in a graph, each naming the node and field it concerns.

use std::fmt;

/// One problem in a graph.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Diagnostic {
    /// The node concerned, if any.
    pub node: Option<String>,
    /// The field concerned, as a dotted path (`params.octaves`, `inputs.a`, `world.size_m`).
    pub field: String,
    pub message: String,
}

impl Diagnostic {
    #[must_use]
    pub fn at(node: Option<&str>, field: String, message: String) -> Self {
        Self {
            node: node.map(str::to_owned),
            field,
            message,
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(n) = &self.node {
            write!(f, "node \"{n}\": ")?;
        }
        if !self.field.is_empty() {
            write!(f, "{}: ", self.field)?;
        }
        f.write_str(&self.message)
    }
}

/// All problems found in one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostics {
    /// The file (as given by the user), or a label like `<memory>`.
    pub file: String,
    pub items: Vec<Diagnostic>,
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.items.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{}: {d}", self.file)?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}
