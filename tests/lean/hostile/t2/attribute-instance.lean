attribute [instance] Classical.propDecidable
theorem t2 (p : Prop) : p ∨ ¬p := by sorry
