//! Parameter declarations (`ParamSpec`), runtime values (`ParamValue`) and the
//! `params!` macro that declares a typed parameter struct and its specs in one place.

use std::fmt;

/// What kind of value a parameter holds, its default and its ranges.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ParamKind {
    /// A real number. `soft` is the slider range, `hard` the validated range (inclusive).
    Float {
        default: f64,
        soft: (f64, f64),
        hard: (f64, f64),
    },
    /// An integer. `soft` is the slider range, `hard` the validated range (inclusive).
    Int {
        default: i64,
        soft: (i64, i64),
        hard: (i64, i64),
    },
    /// A random seed (0 ..= `u32::MAX`); the editor offers a randomise button.
    Seed { default: u32 },
    /// On or off.
    Bool { default: bool },
    /// One of a fixed list of names; stored in files by name.
    Choice {
        default: usize,
        options: &'static [&'static str],
    },
    /// Free text, e.g. a file path relative to the graph file.
    Text { default: &'static str },
}

/// One parameter of a node type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ParamSpec {
    /// Stable name used in graph files (`snake_case`, unit suffix where it has one).
    pub name: &'static str,
    /// One or more lines of documentation.
    pub doc: &'static str,
    /// Unit shown next to the value ("m", "°", "" for relative values).
    pub unit: &'static str,
    pub kind: ParamKind,
    /// What the editor calls it, where the name is a symbol (`kr` → "Rain (K_r)"); empty:
    /// derived from the name ([`ParamSpec::label`]).
    pub label_text: &'static str,
    /// Shown only while the choice parameter `.0` is one of `.1` (e.g. `gradient_weight` only
    /// for the D2M1N3 basis); `None`: always applies.
    pub applies_when: Option<(&'static str, &'static [&'static str])>,
}

impl ParamSpec {
    /// The same parameter with a human label (`params!`: `… = float(…) as "Rain (K_r)"`).
    #[must_use]
    pub const fn labelled(mut self, label: &'static str) -> Self {
        self.label_text = label;
        self
    }

    /// The same parameter, applying only while choice `param` is one of `options`
    /// (`params!`: `… = float(…) if basis in ["d2m1n3"]`).
    #[must_use]
    pub const fn applies_when(
        mut self,
        param: &'static str,
        options: &'static [&'static str],
    ) -> Self {
        self.applies_when = Some((param, options));
        self
    }

    /// The human label: the declared one, else the name without its unit suffix, spaced and
    /// capitalised (`feature_size_m` → "Feature size").
    #[must_use]
    pub fn label(&self) -> String {
        if !self.label_text.is_empty() {
            return self.label_text.to_owned();
        }
        let mut name = self.name;
        for suffix in [
            "_m2_per_yr",
            "_m_per_yr",
            "_per_100m",
            "_km2",
            "_deg",
            "_years",
            "_m",
        ] {
            if let Some(stem) = name.strip_suffix(suffix) {
                name = stem;
                break;
            }
        }
        let words = name.replace('_', " ");
        let mut chars = words.chars();
        chars.next().map_or_else(String::new, |c| {
            c.to_uppercase().chain(chars).collect::<String>()
        })
    }

    /// Whether the parameter applies given the node's other values (see `applies_when`).
    #[must_use]
    pub fn applies(&self, specs: &[ParamSpec], values: &[ParamValue]) -> bool {
        let Some((param, options)) = self.applies_when else {
            return true;
        };
        specs
            .iter()
            .zip(values)
            .find(|(s, _)| s.name == param)
            .is_none_or(|(s, v)| match (s.kind, v) {
                (ParamKind::Choice { options: names, .. }, ParamValue::Choice(i)) => {
                    names.get(*i).is_some_and(|n| options.contains(n))
                }
                _ => true,
            })
    }

    /// The default value.
    #[must_use]
    pub fn default_value(&self) -> ParamValue {
        match self.kind {
            ParamKind::Float { default, .. } => ParamValue::Float(default),
            ParamKind::Int { default, .. } => ParamValue::Int(default),
            ParamKind::Seed { default } => ParamValue::Int(i64::from(default)),
            ParamKind::Bool { default } => ParamValue::Bool(default),
            ParamKind::Choice { default, .. } => ParamValue::Choice(default),
            ParamKind::Text { default } => ParamValue::Text(default.to_owned()),
        }
    }

    /// The documentation as one trimmed string.
    #[must_use]
    pub fn doc_text(&self) -> String {
        clean_doc(self.doc)
    }

    /// A short human description of the accepted values, e.g. `a number in [0, 1]`.
    #[must_use]
    pub fn expected(&self) -> String {
        match self.kind {
            ParamKind::Float { hard, .. } => format!("a number in [{}, {}]", hard.0, hard.1),
            ParamKind::Int { hard, .. } => format!("an integer in [{}, {}]", hard.0, hard.1),
            ParamKind::Seed { .. } => format!("an integer seed in [0, {}]", u32::MAX),
            ParamKind::Bool { .. } => "true or false".to_owned(),
            ParamKind::Choice { options, .. } => format!("one of {}", quoted_list(options)),
            ParamKind::Text { .. } => "a string".to_owned(),
        }
    }

    /// The default value as text (for catalogues).
    #[must_use]
    pub fn default_text(&self) -> String {
        self.default_value().display(self)
    }
}

/// Joins `///` doc lines into one paragraph string.
#[must_use]
pub fn clean_doc(doc: &str) -> String {
    doc.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// `"a", "b" or "c"`.
#[must_use]
pub fn quoted_list(options: &[&str]) -> String {
    let quoted: Vec<String> = options.iter().map(|o| format!("\"{o}\"")).collect();
    match quoted.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

/// A validated runtime parameter value.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamValue {
    Float(f64),
    Int(i64),
    Bool(bool),
    /// Index into the spec's options.
    Choice(usize),
    Text(String),
}

impl ParamValue {
    /// Human-readable value, choices by name.
    #[must_use]
    pub fn display(&self, spec: &ParamSpec) -> String {
        match (self, spec.kind) {
            (ParamValue::Choice(i), ParamKind::Choice { options, .. }) => {
                options.get(*i).copied().unwrap_or("?").to_owned()
            }
            _ => self.to_string(),
        }
    }

    /// Bytes that identify the value exactly (for cache keys).
    pub fn hash_into(&self, hasher: &mut blake3::Hasher) {
        match self {
            ParamValue::Float(v) => {
                hasher.update(b"f");
                // Normalise -0.0 to 0.0 so equal values hash equally.
                let v = if *v == 0.0 { 0.0 } else { *v };
                hasher.update(&v.to_bits().to_le_bytes());
            }
            ParamValue::Int(v) => {
                hasher.update(b"i");
                hasher.update(&v.to_le_bytes());
            }
            ParamValue::Bool(v) => {
                hasher.update(if *v { b"t" } else { b"n" });
            }
            ParamValue::Choice(i) => {
                hasher.update(b"c");
                hasher.update(&(*i as u64).to_le_bytes());
            }
            ParamValue::Text(s) => {
                hasher.update(b"s");
                hasher.update(&(s.len() as u64).to_le_bytes());
                hasher.update(s.as_bytes());
            }
        }
    }
}

impl fmt::Display for ParamValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamValue::Float(v) => write!(f, "{v}"),
            ParamValue::Int(v) => write!(f, "{v}"),
            ParamValue::Bool(v) => write!(f, "{v}"),
            ParamValue::Choice(i) => write!(f, "#{i}"),
            ParamValue::Text(s) => write!(f, "\"{s}\""),
        }
    }
}

/// Field types that may hold each kind of parameter: `params!` checks every field against
/// its declared kind at compile time (a `u32` field declared `float(…)` would otherwise
/// decode to 0 at run time).
pub mod kinds {
    /// `float(…)`
    pub trait Float {}
    impl Float for f32 {}
    impl Float for f64 {}
    /// `int(…)`
    pub trait Int {}
    impl Int for u32 {}
    impl Int for i64 {}
    /// `seed(…)`
    pub trait Seed {}
    impl Seed for u32 {}
    /// `flag(…)`
    pub trait Flag {}
    impl Flag for bool {}
    /// `text(…)`
    pub trait Text {}
    impl Text for String {}
    /// `choice(…)`: any [`ChoiceEnum`](super::ChoiceEnum).
    pub trait Choice {}
    impl<T: super::ChoiceEnum> Choice for T {}
}

/// A Rust type a parameter field can have.
pub trait ParamType: Sized + Default {
    fn from_value(v: &ParamValue) -> Option<Self>;
}

impl ParamType for f32 {
    fn from_value(v: &ParamValue) -> Option<Self> {
        match v {
            ParamValue::Float(x) => Some(*x as f32),
            _ => None,
        }
    }
}

impl ParamType for f64 {
    fn from_value(v: &ParamValue) -> Option<Self> {
        match v {
            ParamValue::Float(x) => Some(*x),
            _ => None,
        }
    }
}

impl ParamType for u32 {
    fn from_value(v: &ParamValue) -> Option<Self> {
        match v {
            ParamValue::Int(x) => u32::try_from(*x).ok(),
            _ => None,
        }
    }
}

impl ParamType for i64 {
    fn from_value(v: &ParamValue) -> Option<Self> {
        match v {
            ParamValue::Int(x) => Some(*x),
            _ => None,
        }
    }
}

impl ParamType for bool {
    fn from_value(v: &ParamValue) -> Option<Self> {
        match v {
            ParamValue::Bool(x) => Some(*x),
            _ => None,
        }
    }
}

impl ParamType for String {
    fn from_value(v: &ParamValue) -> Option<Self> {
        match v {
            ParamValue::Text(x) => Some(x.clone()),
            _ => None,
        }
    }
}

/// An enum usable as a `choice` parameter. Declare it with [`choice_enum!`](crate::choice_enum).
pub trait ChoiceEnum: Sized + Copy {
    /// Names in variant order, as written in graph files.
    const NAMES: &'static [&'static str];
    fn from_index(i: usize) -> Option<Self>;
}

/// The name of a choice as files and the command line write it.
#[must_use]
pub fn choice_name<T: ChoiceEnum + PartialEq>(v: T) -> &'static str {
    (0..T::NAMES.len())
        .find(|&i| T::from_index(i) == Some(v))
        .map_or("?", |i| T::NAMES[i])
}

/// The choice called `name`, or a message listing the names there are.
pub fn choice_from_name<T: ChoiceEnum>(name: &str) -> Result<T, String> {
    T::NAMES
        .iter()
        .position(|n| *n == name)
        .and_then(T::from_index)
        .ok_or_else(|| format!("\"{name}\" is not one of {}", quoted_list(T::NAMES)))
}

/// Implements [`ChoiceEnum`] for an existing enum (one that is not a node parameter, e.g. an
/// export format): `impl_choice!(Format { Png16 = "png16", Exr = "exr" });`.
#[macro_export]
macro_rules! impl_choice {
    ($name:ident { $($var:ident = $s:literal),+ $(,)? }) => {
        impl $crate::node::ChoiceEnum for $name {
            const NAMES: &'static [&'static str] = &[$($s),+];
            fn from_index(i: usize) -> Option<Self> {
                const ALL: &[$name] = &[$($name::$var),+];
                ALL.get(i).copied()
            }
        }
    };
}

/// A typed parameter struct declared with [`params!`](crate::params).
pub trait Params: Sized {
    /// The parameter specs in field order.
    const SPECS: &'static [ParamSpec];
    /// Builds the struct from validated values in spec order.
    fn from_values(values: &[ParamValue]) -> Self;
}

/// A node without parameters.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NoParams;

impl Params for NoParams {
    const SPECS: &'static [ParamSpec] = &[];
    fn from_values(_: &[ParamValue]) -> Self {
        NoParams
    }
}

/// Declares an enum usable as a `choice` parameter: variants and their file names.
///
/// ```ignore
/// choice_enum! { pub enum Interp { S3 = "s3", S5 = "s5" } }
/// ```
#[macro_export]
macro_rules! choice_enum {
    ($(#[$meta:meta])* pub enum $name:ident { $first:ident = $first_str:literal $(, $var:ident = $s:literal)* $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        pub enum $name { #[default] $first $(, $var)* }
        impl $crate::node::ChoiceEnum for $name {
            const NAMES: &'static [&'static str] = &[$first_str $(, $s)*];
            fn from_index(i: usize) -> Option<Self> {
                const ALL: &[$name] = &[$name::$first $(, $name::$var)*];
                ALL.get(i).copied()
            }
        }
        impl $crate::node::ParamType for $name {
            fn from_value(v: &$crate::node::ParamValue) -> Option<Self> {
                match v {
                    $crate::node::ParamValue::Choice(i) => <$name as $crate::node::ChoiceEnum>::from_index(*i),
                    _ => None,
                }
            }
        }
    };
}

/// Declares a parameter struct and its [`ParamSpec`]s together.
///
/// Each field is `name: Type = kind(args)` with kind one of
/// `float(default, [soft_lo, soft_hi], [hard_lo, hard_hi], "unit")`,
/// `int(default, [soft_lo, soft_hi], [hard_lo, hard_hi], "unit")`,
/// `seed(default)`, `flag(default)`, `choice(Enum::Variant)`, `text("default")`,
/// optionally followed by `as "Human label"` (where the name is a symbol) and
/// `if choice_param in ["option", …]` (the parameter applies only for those options).
/// The field's `///` doc comment becomes the parameter's documentation.
///
/// ```
/// orogen::params! {
///     pub struct P {
///         /// Strength.
///         strength: f64 = float(0.5, [0.0, 1.0], [0.0, 1.0], "") as "Strength (s)",
///     }
/// }
/// ```
///
/// A field whose type does not fit its kind does not compile:
///
/// ```compile_fail
/// orogen::params! {
///     pub struct P {
///         /// Strength.
///         strength: u32 = float(0.5, [0.0, 1.0], [0.0, 1.0], ""),
///     }
/// }
/// ```
#[macro_export]
macro_rules! params {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $(
                $(#[doc = $doc:expr])*
                $field:ident : $ty:ty = $kind:ident ( $($arg:tt)* )
                    $(as $label:literal)?
                    $(if $when:ident in [$($opt:literal),+ $(,)?])?
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq)]
        pub struct $name {
            $( $(#[doc = $doc])* pub $field: $ty, )*
        }
        const _: () = {
            // Never called: each field's type must have its declared kind, or this fails to
            // compile.
            #[expect(dead_code)]
            fn kinds() {
                $( $crate::params!(@kind $ty, $kind); )*
            }
        };
        impl $crate::node::Params for $name {
            const SPECS: &'static [$crate::node::ParamSpec] = &[
                $( $crate::params!(@spec $field, $ty, concat!($($doc, "\n",)* ""), $kind ( $($arg)* ))
                    $(.labelled($label))?
                    $(.applies_when(stringify!($when), &[$($opt),+]))?, )*
            ];
            fn from_values(values: &[$crate::node::ParamValue]) -> Self {
                let mut it = values.iter();
                Self {
                    $( $field: it.next().and_then(<$ty as $crate::node::ParamType>::from_value).unwrap_or_default(), )*
                }
            }
        }
    };
    (@kind $ty:ty, float) => {{ fn f<T: $crate::node::param_kinds::Float>() {} f::<$ty>(); }};
    (@kind $ty:ty, int) => {{ fn i<T: $crate::node::param_kinds::Int>() {} i::<$ty>(); }};
    (@kind $ty:ty, seed) => {{ fn s<T: $crate::node::param_kinds::Seed>() {} s::<$ty>(); }};
    (@kind $ty:ty, flag) => {{ fn b<T: $crate::node::param_kinds::Flag>() {} b::<$ty>(); }};
    (@kind $ty:ty, text) => {{ fn t<T: $crate::node::param_kinds::Text>() {} t::<$ty>(); }};
    (@kind $ty:ty, choice) => {{ fn c<T: $crate::node::param_kinds::Choice>() {} c::<$ty>(); }};
    (@spec $field:ident, $ty:ty, $doc:expr, float($def:expr, [$slo:expr, $shi:expr], [$hlo:expr, $hhi:expr], $unit:literal)) => {
        $crate::node::ParamSpec { name: stringify!($field), doc: $doc, unit: $unit, label_text: "", applies_when: None,
            kind: $crate::node::ParamKind::Float { default: $def, soft: ($slo, $shi), hard: ($hlo, $hhi) } }
    };
    (@spec $field:ident, $ty:ty, $doc:expr, int($def:expr, [$slo:expr, $shi:expr], [$hlo:expr, $hhi:expr], $unit:literal)) => {
        $crate::node::ParamSpec { name: stringify!($field), doc: $doc, unit: $unit, label_text: "", applies_when: None,
            kind: $crate::node::ParamKind::Int { default: $def, soft: ($slo, $shi), hard: ($hlo, $hhi) } }
    };
    (@spec $field:ident, $ty:ty, $doc:expr, seed($def:expr)) => {
        $crate::node::ParamSpec { name: stringify!($field), doc: $doc, unit: "", label_text: "", applies_when: None,
            kind: $crate::node::ParamKind::Seed { default: $def } }
    };
    (@spec $field:ident, $ty:ty, $doc:expr, flag($def:expr)) => {
        $crate::node::ParamSpec { name: stringify!($field), doc: $doc, unit: "", label_text: "", applies_when: None,
            kind: $crate::node::ParamKind::Bool { default: $def } }
    };
    (@spec $field:ident, $ty:ty, $doc:expr, text($def:literal)) => {
        $crate::node::ParamSpec { name: stringify!($field), doc: $doc, unit: "", label_text: "", applies_when: None,
            kind: $crate::node::ParamKind::Text { default: $def } }
    };
    (@spec $field:ident, $ty:ty, $doc:expr, choice($def:expr)) => {
        $crate::node::ParamSpec { name: stringify!($field), doc: $doc, unit: "", label_text: "", applies_when: None,
            kind: $crate::node::ParamKind::Choice { default: $def as usize, options: <$ty as $crate::node::ChoiceEnum>::NAMES } }
    };
}
