macro_rules | `($a + $b) => `($a * $b)
theorem t2 (x : ℕ) : x + 0 = x := by sorry
