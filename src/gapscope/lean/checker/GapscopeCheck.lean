/-
gapscope's out-of-environment checker (see docs/lean.md; written without a Lean toolchain at
hand, so it is untested against a real Lean - SafeVerify or comparator are preferred where
built).

  lake env lean --run GapscopeCheck.lean <folder> <challenge module> <solution module> <names>...

reads the two compiled modules from <folder>, rebuilds each environment from its imports and
replays the module's own constants through the kernel (`Lean.Environment.replay`), so that no
extension of the model's code (macros, elaborators, attributes) is ever active here. For every
name it then compares the solution's constant with the challenge's: same type and universe
parameters, and agreement on every constant the type mentions, transitively (constants both
sides import from the same header module are the same olean's and are not compared again);
and it collects the solution constant's axioms. It prints one JSON line; the harness decides.
-/
import Lean
import Lean.Replay

open Lean

/-- The module's imports and its own constants, from its `.olean`. -/
def loadModule (folder : System.FilePath) (module : String) :
    IO (Array Import × Std.HashMap Name ConstantInfo) := do
  let (data, _) ← readModuleData (folder / s!"{module}.olean")
  let mut constants : Std.HashMap Name ConstantInfo := {}
  for (name, info) in data.constNames.zip data.constants do
    constants := constants.insert name info
  return (data.imports, constants)

/-- A fresh environment of the imports with the module's constants replayed by the kernel. -/
def rebuild (imports : Array Import) (constants : Std.HashMap Name ConstantInfo) :
    IO Environment := do
  let base ← importModules imports {}
  base.replay constants

/-- The header module a constant was imported from, if it was imported. -/
def importedFrom (env : Environment) (name : Name) : Option Name :=
  (env.getModuleIdxFor? name).map fun idx => env.header.moduleNames[idx.toNat]!

/-- Whether two constants of the same name are the same: kind, universes, type, and the value
of a definition. -/
def sameConstant (a b : ConstantInfo) : Bool :=
  a.levelParams == b.levelParams && a.type == b.type &&
    match a, b with
    | .defnInfo x, .defnInfo y => x.value == y.value
    | .thmInfo _, .thmInfo _ => true
    | .axiomInfo _, .axiomInfo _ => true
    | .opaqueInfo x, .opaqueInfo y => x.value == y.value
    | .quotInfo _, .quotInfo _ => true
    | .inductInfo x, .inductInfo y => x.ctors == y.ctors && x.numParams == y.numParams
    | .ctorInfo x, .ctorInfo y => x.induct == y.induct && x.cidx == y.cidx
    | .recInfo _, .recInfo _ => true
    | _, _ => false

/-- The constants (other than those imported from one and the same header module) that the
challenge's type of `root` mentions, transitively, on which the two environments differ. -/
partial def disagreeing (challenge solution : Environment) (root : Expr) : Array Name := Id.run do
  let mut todo := root.getUsedConstants.toList
  let mut seen : NameSet := {}
  let mut bad := #[]
  while !todo.isEmpty do
    let name := todo.head!
    todo := todo.tail!
    if seen.contains name then continue
    seen := seen.insert name
    match challenge.find? name, solution.find? name with
    | some a, some b =>
      let shared := match importedFrom challenge name, importedFrom solution name with
        | some m, some n => m == n
        | _, _ => false
      if shared then continue
      if !sameConstant a b then bad := bad.push name
      let more := a.type.getUsedConstants ++ (a.value?.map (·.getUsedConstants)).getD #[]
      todo := more.toList ++ todo
    | _, _ => bad := bad.push name
  return bad

def axiomsOf (env : Environment) (name : Name) : Array Name :=
  let ((), state) := ((CollectAxioms.collect name).run env).run {}
  state.axioms

def report (challenge solution : Environment) (name : Name) : Json :=
  match challenge.find? name, solution.find? name with
  | some c, some s =>
    let bad := disagreeing challenge solution c.type
    Json.mkObj [
      ("name", toJson name.toString), ("in_challenge", toJson true),
      ("in_solution", toJson true),
      ("same_type", toJson (c.levelParams == s.levelParams && c.type == s.type)),
      ("constants_agree", toJson bad.isEmpty),
      ("disagreeing", toJson (bad.map (·.toString))),
      ("axioms", toJson ((axiomsOf solution name).map (·.toString)))]
  | c, s =>
    Json.mkObj [("name", toJson name.toString), ("in_challenge", toJson c.isSome),
      ("in_solution", toJson s.isSome)]

def main (args : List String) : IO UInt32 := do
  match args with
  | folder :: challengeModule :: solutionModule :: names =>
    try
      initSearchPath (← findSysroot)
      let (cImports, cConstants) ← loadModule folder challengeModule
      let challenge ← rebuild cImports cConstants
      let (sImports, sConstants) ← loadModule folder solutionModule
      let replayed ← (rebuild sImports sConstants).toBaseIO
      match replayed with
      | .error err =>
        IO.println (Json.mkObj [("checker", toJson "gapscope"),
          ("replay", Json.mkObj [("ok", toJson false), ("error", toJson (toString err))]),
          ("theorems", Json.arr #[])]).compress
      | .ok solution =>
        let theorems := names.toArray.map fun n => report challenge solution n.toName
        IO.println (Json.mkObj [("checker", toJson "gapscope"),
          ("replay", Json.mkObj [("ok", toJson true)]), ("theorems", Json.arr theorems)]).compress
      return 0
    catch err =>
      IO.println (Json.mkObj [("checker", toJson "gapscope"),
        ("error", toJson (toString err))]).compress
      return 1
  | _ =>
    IO.eprintln "usage: GapscopeCheck <folder> <challenge module> <solution module> <names>..."
    return 2
