//! Filling cells without data (a DEM's nodata holes, an array input's NaNs) from the data around them.

/// Fills the cells without data from those around them: a push–pull pyramid (each level
/// halves the grid, averaging the valid cells; then, from the coarsest level down, a hole takes
/// the bilinear value of the level above). Every hole gets the mean of the valid data nearest
/// it, smoothly, however large the hole; valid cells are kept.
pub fn fill_holes(data: &mut [f32], valid: &[bool], w: usize, h: usize) {
    // Level 0: values weighted by validity.
    let mut levels: Vec<(usize, usize, Vec<f32>, Vec<f32>)> = vec![(
        w,
        h,
        data.iter()
            .zip(valid)
            .map(|(&v, &ok)| if ok { v } else { 0.0 })
            .collect(),
        valid.iter().map(|&ok| f32::from(u8::from(ok))).collect(),
    )];
    while let Some((lw, lh, v, wt)) = levels.last().filter(|l| l.0 > 1 || l.1 > 1) {
        let (lw, lh) = (*lw, *lh);
        let (nw, nh) = (lw.div_ceil(2), lh.div_ceil(2));
        let (mut sv, mut sw) = (vec![0.0f32; nw * nh], vec![0.0f32; nw * nh]);
        for y in 0..lh {
            for x in 0..lw {
                let (i, j) = (y * lw + x, (y / 2) * nw + x / 2);
                sv[j] += v[i] * wt[i];
                sw[j] += wt[i];
            }
        }
        for (a, &b) in sv.iter_mut().zip(&sw) {
            if b > 0.0 {
                *a /= b;
            }
        }
        // Weights saturate: a coarse cell with any data counts as known.
        let sw = sw.iter().map(|&b| b.min(1.0)).collect();
        levels.push((nw, nh, sv, sw));
    }
    // Pull: from the coarsest level down, unknown cells take the level above's value.
    for k in (0..levels.len() - 1).rev() {
        let (upper, lower) = levels.split_at_mut(k + 1);
        let (cw, ch, cv) = (lower[0].0, lower[0].1, lower[0].2.clone());
        let l = &mut upper[k];
        for y in 0..l.1 {
            for x in 0..l.0 {
                let i = y * l.0 + x;
                if l.3[i] > 0.0 {
                    continue;
                }
                // Bilinear in the coarser grid, at this cell's centre.
                let fx = (f32::midpoint(x as f32, 0.5) - 0.5).clamp(0.0, (cw - 1) as f32);
                let fy = (f32::midpoint(y as f32, 0.5) - 0.5).clamp(0.0, (ch - 1) as f32);
                let (x0, y0) = (fx.floor() as usize, fy.floor() as usize);
                let (x1, y1) = ((x0 + 1).min(cw - 1), (y0 + 1).min(ch - 1));
                let (tx, ty) = (fx - x0 as f32, fy - y0 as f32);
                let at = |x: usize, y: usize| cv[y * cw + x];
                let top = at(x0, y0) * (1.0 - tx) + at(x1, y0) * tx;
                let bottom = at(x0, y1) * (1.0 - tx) + at(x1, y1) * tx;
                l.2[i] = top * (1.0 - ty) + bottom * ty;
                l.3[i] = 1.0;
            }
        }
    }
    for ((d, &ok), &v) in data.iter_mut().zip(valid).zip(&levels[0].2) {
        if !ok {
            *d = v;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holes_take_the_data_around_them_and_data_stays() {
        let (w, h) = (9, 7);
        let mut data: Vec<f32> = (0..w * h).map(|i| (i % w) as f32).collect();
        let mut valid = vec![true; w * h];
        for i in [10, 11, 12, 20, 21, 22, 30] {
            valid[i] = false;
            data[i] = -9999.0;
        }
        let before = data.clone();
        fill_holes(&mut data, &valid, w, h);
        for i in 0..w * h {
            if valid[i] {
                assert_eq!(data[i], before[i]);
            } else {
                // Within the range of the valid values, near its column's.
                assert!((0.0..=8.0).contains(&data[i]), "cell {i}: {}", data[i]);
                assert!(
                    (data[i] - (i % w) as f32).abs() < 3.0,
                    "cell {i}: {}",
                    data[i]
                );
            }
        }
    }
}
