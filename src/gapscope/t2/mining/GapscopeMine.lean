/-
gapscope's declaration tracer for `gapscope t2 mine` (docs/t2.md, "Mining a T2 set"). It was
written without a Lean toolchain at hand (none can be installed where gapscope is developed),
so it is UNTESTED against a real Lean; the Python side is tested against a fake that writes
this program's JSON.

  lake env lean --run GapscopeMine.lean <out.json> <modules file> <module>...

imports the given modules of the project (built by `lake build` first) into one environment
and writes one JSON object to <out.json>:

  {"tracer": "gapscope", "lean": <Lean.versionString>, "modules": [<module>...],
   "declarations": [{"name", "source_name", "module", "kind", "is_prop",
                     "range": {"start": {"line", "column"}, "end": {"line", "column"}},
                     "uses": [<name>...]}...]}

one entry for every constant that a person wrote (`written`) in one of the given modules:
`kind` from the constant itself (theorem, def, instance, opaque, axiom, inductive, structure,
class; an `abbrev` is a `def` here: the environment cannot tell it from `@[reducible] def`,
so gapscope reads `def`/`abbrev` from the source at `range`), `is_prop` whether its type is a proposition (`Meta.isProp`: T2's Hard tag),
`range` from the declaration-ranges extension (lines 1-based, columns in codepoints 0-based,
doc comment and attributes included, end exclusive), and `uses` the project declarations -
constants of a module listed in <modules file>, one name a line - that its type and value
(for an inductive type, its constructors' types) mention, directly or through a constant Lean
generated for it (its `proof_N`, matchers, `_unary`). A mentioned constant that Lean
generated (an equation lemma, a constructor, a projection ...) stands for its owner: the
nearest prefix of its name that a person wrote. Generated constants that Lean shares between
declarations are looked through instead, never credited to the declaration whose name they
carry: matchers (Lean reuses `foo.match_1` for an identical `match` in `bar`) and auxiliary
lemmas (`mkAuxLemma` caches them by type; simp's module-level `<Module>._auxLemma.N` has no
owner at all). `name` and `uses` are Lean's full names (unique: a private declaration's carries
its private prefix); `source_name` is the name as the source writes it (without that prefix).
`module` is each module exactly as given on the command line (not `Name.toString`, which
would write `Proj.«More Things»` for `Proj.More Things`). On failure it writes
{"error": <message>} and exits 1.

APIs, at the pinned toolchain leanprover/lean4:v4.33.0-rc2 (nothing can be compiled where
gapscope is developed): where code built for that toolchain makes the same call
(leanprover-community/repl 8948401, leanprover/comparator 5d21b89), the call here cites it.
The others (`findDeclarationRangesCore?`, `isInstance`, `isAuxRecursor`, `isNoConfusion`,
`isProjectionFn`, `isClass`, `isStructure`, `isMatcherCore`, `privateToUserName`,
`Name.isInternalDetail`, `Meta.isProp`, `getModuleIdxFor?`/`getModuleIdx?`, `header.moduleData`)
were read in lean4's sources but not at that tag; a self-test that compiles this program on
the user's installation is what settles them.
-/
import Lean

open Lean Meta

/-- Whether `name` is a constant a person wrote: not an implementation detail
(`Name.isInternalDetail` once the private prefix is dropped), not one Lean generates with an
inductive type (constructors, recursors, `casesOn`, `noConfusion`, structure projections), and
with a declaration range of its own (the elaborator records one for each user declaration). -/
def written (name : Name) : CoreM Bool := do
  let env ← getEnv
  let some info := env.find? name | return false
  if (privateToUserName name).isInternalDetail then return false
  if info matches .ctorInfo _ | .recInfo _ | .quotInfo _ then return false
  if isAuxRecursor env name || isNoConfusion env name || env.isProjectionFn name then
    return false
  return (← findDeclarationRangesCore? name).isSome

/-- The declaration `name` stands for: itself if a person wrote it, else its nearest written
prefix (Lean names generated constants under the declaration they belong to). -/
partial def owner (name : Name) : CoreM (Option Name) := do
  if name.isAnonymous then return none
  if (← written name) then return some name
  owner name.getPrefix

/-- Whether some component of `name` is a string starting with one of `marks` (read on
`Name`'s own constructors, `Init/Prelude.lean`). -/
def hasMark (marks : List String) : Name → Bool
  -- `String.startsWith` with a string, as repl 8948401 calls it (REPL/Main.lean:428)
  | .str p c => marks.any (c.startsWith ·) || hasMark marks p
  | .num p _ => hasMark marks p
  | .anonymous => false

/-- Whether Lean may share the generated constant `name` between declarations: a matcher
(`Lean.Meta.isMatcherCore (env : Environment) (declName : Name) : Bool`,
`src/Lean/Meta/Match/MatcherInfo.lean`; `mkMatcherAuxDefinition` reuses a matcher whose
closed term is the same) or an auxiliary lemma (`mkAuxLemma`, `src/Lean/Meta/Tactic/AuxLemma.lean`,
caches by type and names with `_proof` or the caller's kind, simp's `_auxLemma`; older Lean
put `_auxLemma` under the module's name; `proof_N` of `abstractNestedProofs`). -/
def shared (env : Environment) (name : Name) : Bool :=
  isMatcherCore env name || hasMark ["_auxLemma", "_proof", "proof_"] name

def kindOf (info : ConstantInfo) : CoreM String := do
  let env ← getEnv
  if (← isInstance info.name) then return "instance"
  return match info with
    | .thmInfo _ => "theorem"
    | .defnInfo _ => "def"  -- `abbrev` or `@[reducible] def`: gapscope reads which from the source
    | .opaqueInfo _ => "opaque"
    | .axiomInfo _ => "axiom"
    | .inductInfo _ =>
      if isClass env info.name then "class"
      else if isStructure env info.name then "structure" else "inductive"
    | _ => "other"

/-- The constants the type and the value of `info` mention (for an inductive type, the types
of its constructors). -/
def mentioned (env : Environment) (info : ConstantInfo) : Array Name := Id.run do
  -- `getUsedConstants` and `value? (allowOpaque := true)` as comparator 5d21b89 calls them
  -- (Comparator/Util.lean:11-14)
  let mut names := info.type.getUsedConstants
  if let some value := info.value? (allowOpaque := true) then
    names := names ++ value.getUsedConstants
  if let .inductInfo v := info then
    for ctor in v.ctors do
      if let some c := env.find? ctor then names := names ++ c.type.getUsedConstants
  return names


/-- The project declarations `info` uses: the written owner of each project constant its type
and value mention, looking through the constants Lean generated for `info` itself (a
`proof_1`, a `match_1`, the `_unary` of a well-founded definition), whose bodies hold uses
that `info`'s own value only names through them, through the generated constants Lean shares
between declarations (`shared`), and through generated constants with no written owner. -/
def usesOf (project : Std.HashSet Name) (info : ConstantInfo) : CoreM (Array Name) := do
  let env ← getEnv
  let mut uses : Array Name := #[]
  let mut seen : Std.HashSet Name := {}
  let mut todo : List Name := (mentioned env info).toList
  while true do
    let c :: rest := todo | break
    todo := rest
    if seen.contains c then continue
    seen := seen.insert c
    let inProject := (env.getModuleIdxFor? c).any fun i =>
      project.contains env.header.moduleNames[i.toNat]!
    if !inProject then continue
    let o ← owner c
    match o with
    | some o =>
      if o != info.name && (o == c || !shared env c) then
        if !uses.contains o then uses := uses.push o
        continue
    | none => pure ()
    -- generated for `info`, shared between declarations, or owned by nobody: look through it
    if let some generated := env.find? c then
      todo := (mentioned env generated).toList ++ todo
  return uses

def position (p : Position) : Json :=
  Json.mkObj [("line", toJson p.line), ("column", toJson p.column)]

def entry (project : Std.HashSet Name) (module : String) (info : ConstantInfo) :
    CoreM (Option Json) := do
  let some ranges ← findDeclarationRangesCore? info.name | return none
  let uses ← usesOf project info
  let isProp ← (Meta.isProp info.type).run' {} {}
  return some <| Json.mkObj [
    ("name", toJson info.name.toString),
    ("source_name", toJson (privateToUserName info.name).toString),
    ("module", toJson module),
    ("kind", toJson (← kindOf info)), ("is_prop", toJson isProp),
    ("range", Json.mkObj [("start", position ranges.range.pos),
                          ("end", position ranges.range.endPos)]),
    ("uses", toJson (uses.map (·.toString)))]

/-- `(as given, as a Name)` for each module: the JSON echoes the first. -/
def trace (project : Std.HashSet Name) (modules : Array (String × Name)) :
    CoreM (Array Json) := do
  let env ← getEnv
  let mut out : Array Json := #[]
  for (given, module) in modules do
    let some idx := env.getModuleIdx? module | throwError "module {module} was not imported"
    for name in env.header.moduleData[idx.toNat]!.constNames do
      if !(← written name) then continue
      let some info := env.find? name | continue
      if let some json ← entry project given info then out := out.push json
  return out

def main (args : List String) : IO UInt32 := do
  match args with
  | out :: modulesFile :: modules =>
    try
      initSearchPath (← findSysroot)  -- as repl 8948401 (REPL/Main.lean:442)
      let listed ← IO.FS.lines modulesFile
      -- `String.trimAscii` (a `String.Slice`), `.isEmpty` and `.toString`, as repl 8948401
      -- calls them (REPL/Main.lean:372, REPL/JSON.lean:73): `String.trim` is
      -- `@[deprecated String.trimAscii (since := "2025-11-17")]` (lean4
      -- src/Init/Data/String/TakeDrop.lean), and its warning would name this file. `String.toName` as comparator 5d21b89 calls it
      -- (Main.lean:304-306): it splits at dots and builds each part as written, no `«»`.
      let project : Std.HashSet Name := listed.foldl (init := {}) fun s line =>
        if line.trimAscii.isEmpty then s else s.insert line.trimAscii.toString.toName
      let modules := modules.toArray.map fun m => (m, m.toName)
      -- `lean --run` has enabled initializers, so the extensions (instances, ranges) can load;
      -- the call as repl 8948401 makes it (REPL/Lean/Environment.lean:34)
      let imports := modules.map fun (_, m) => ({ module := m } : Import)
      let env ← importModules imports {} 0 (loadExts := true)
      let (decls, _) ← (trace project modules).toIO
        { fileName := "<gapscope-mine>", fileMap := default, maxHeartbeats := 0 } { env := env }
      -- `Json.arr` as repl 8948401 (REPL/Main.lean:336), `Json.mkObj`/`compress` as comparator
      -- 5d21b89 (Main.lean:157)
      IO.FS.writeFile out (Json.mkObj [("tracer", toJson "gapscope"),
        ("lean", toJson Lean.versionString), ("modules", toJson (modules.map (·.1))),
        ("declarations", Json.arr decls)]).compress
      return 0
    catch err =>
      IO.FS.writeFile out (Json.mkObj [("error", toJson (toString err))]).compress
      return 1
  | _ =>
    IO.eprintln "usage: GapscopeMine <out.json> <modules file> <module>..."
    return 2
