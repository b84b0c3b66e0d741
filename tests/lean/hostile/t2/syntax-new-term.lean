syntax "⟪" term "⟫" : term
theorem t2 : True := by sorry
