//! Order statistics over samples.

#[derive(Clone, Copy, Debug)]
pub struct Summary {
    pub n: usize,
    pub median: f64,
    pub p25: f64,
    pub p75: f64,
    pub p99: f64,
    pub min: f64,
    pub max: f64,
}

/// Linear interpolation between closest ranks (R's default type 7).
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let h = (sorted.len() - 1) as f64 * q;
    let lo = h.floor() as usize;
    let hi = h.ceil() as usize;
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

pub fn summarize(xs: &[f64]) -> Option<Summary> {
    if xs.is_empty() {
        return None;
    }
    let mut s = xs.to_vec();
    s.sort_by(|a, b| a.partial_cmp(b).unwrap());
    Some(Summary {
        n: s.len(),
        median: quantile(&s, 0.5),
        p25: quantile(&s, 0.25),
        p75: quantile(&s, 0.75),
        p99: quantile(&s, 0.99),
        min: s[0],
        max: s[s.len() - 1],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn quantiles_match_r_type_7() {
        // R: quantile(c(1, 2, 4, 10), c(.25, .5, .75, .99))  ->  1.75 3.00 5.50 9.82
        let s = [1.0, 2.0, 4.0, 10.0];
        assert!((quantile(&s, 0.25) - 1.75).abs() < 1e-12);
        assert!((quantile(&s, 0.5) - 3.0).abs() < 1e-12);
        assert!((quantile(&s, 0.75) - 5.5).abs() < 1e-12);
        assert!((quantile(&s, 0.99) - 9.82).abs() < 1e-12);
    }
}
