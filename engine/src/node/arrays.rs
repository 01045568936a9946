//! Arrays handed to an evaluation by the program running it (the Python package's
//! `Graph.set_array`): the `array_input` node reads the one named by its `name` parameter. An
//! array is part of the evaluation's input like the resolution, so a node's cache key holds
//! the content hash of the array it reads (see `eval::key::node_key`).

use crate::field::Field;
use std::collections::BTreeMap;
use std::sync::Arc;

/// One supplied array and the hash of its shape and samples.
#[derive(Clone, Debug)]
pub struct ArrayInput {
    pub field: Arc<Field>,
    pub hash: [u8; 32],
}

/// Arrays by name.
#[derive(Clone, Debug, Default)]
pub struct ArrayInputs {
    arrays: BTreeMap<String, ArrayInput>,
}

/// Largest array side accepted (the largest build resolution).
pub const MAX_SIDE: usize = crate::field::MAX_RESOLUTION as usize;

impl ArrayInputs {
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) array `name`: `height` rows of `width` samples, row-major, north
    /// row first. Non-finite samples (NaN: no data) are filled from the samples around them
    /// as GeoTIFF no-data cells are. Errors name what was wrong.
    pub fn insert(
        &mut self,
        name: &str,
        width: usize,
        height: usize,
        mut data: Vec<f32>,
    ) -> Result<(), String> {
        if name.is_empty() {
            return Err("an array needs a name (the array_input node's \"name\")".into());
        }
        if width < 2 || height < 2 || width > MAX_SIDE || height > MAX_SIDE {
            return Err(format!(
                "array \"{name}\": {width}×{height} samples; expected 2 to {MAX_SIDE} per side"
            ));
        }
        if data.len() != width * height {
            return Err(format!(
                "array \"{name}\": {} samples for a {width}×{height} shape",
                data.len()
            ));
        }
        let valid: Vec<bool> = data.iter().map(|v| v.is_finite()).collect();
        if !valid.iter().any(|&v| v) {
            return Err(format!("array \"{name}\": no finite sample"));
        }
        if valid.iter().any(|&v| !v) {
            crate::field::holes::fill_holes(&mut data, &valid, width, height);
        }
        let mut h = blake3::Hasher::new();
        h.update(&(width as u64).to_le_bytes());
        h.update(&(height as u64).to_le_bytes());
        for v in &data {
            h.update(&v.to_bits().to_le_bytes());
        }
        let field = Field::from_vec(width, height, data)
            .ok_or_else(|| format!("array \"{name}\": shape {width}×{height} rejected"))?;
        self.arrays.insert(
            name.to_owned(),
            ArrayInput {
                field: Arc::new(field),
                hash: *h.finalize().as_bytes(),
            },
        );
        Ok(())
    }

    /// Removes array `name`; whether it was there.
    pub fn remove(&mut self, name: &str) -> bool {
        self.arrays.remove(name).is_some()
    }

    #[must_use]
    pub fn get(&self, name: &str) -> Option<&ArrayInput> {
        self.arrays.get(name)
    }

    /// The names supplied, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.arrays.keys().map(String::as_str)
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.arrays.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_are_checked_hashed_by_content_and_their_holes_filled() {
        let mut a = ArrayInputs::new();
        assert_eq!(
            a.insert("dem", 3, 2, vec![0.0; 5]).expect_err("refused"),
            "array \"dem\": 5 samples for a 3×2 shape"
        );
        assert_eq!(
            a.insert("dem", 1, 4, vec![0.0; 4]).expect_err("refused"),
            format!("array \"dem\": 1×4 samples; expected 2 to {MAX_SIDE} per side")
        );
        assert_eq!(
            a.insert("dem", 2, 2, vec![f32::NAN; 4])
                .expect_err("refused"),
            "array \"dem\": no finite sample"
        );
        a.insert("dem", 2, 2, vec![1.0, f32::NAN, 1.0, 1.0])
            .expect("accepted");
        let first = a.get("dem").expect("supplied").clone();
        assert_eq!(first.field.data(), &[1.0, 1.0, 1.0, 1.0]);
        a.insert("dem", 2, 2, vec![1.0, 1.0, 1.0, 1.0])
            .expect("accepted");
        assert_eq!(a.get("dem").expect("supplied").hash, first.hash);
        a.insert("dem", 2, 2, vec![1.0, 1.0, 1.0, 2.0])
            .expect("accepted");
        assert_ne!(a.get("dem").expect("supplied").hash, first.hash);
        assert!(a.remove("dem") && a.is_empty());
    }
}
