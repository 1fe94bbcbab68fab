"""The registry of sources and subsets: loaded from YAML, checked against its schema."""

from __future__ import annotations

import functools
import os
from pathlib import Path

from preprocess.errors import RegistryError, did_you_mean, quoted
from preprocess.formats import textparse
from preprocess.formats.brief import briefly
from preprocess.registry import rawfile, recipes
from preprocess.registry.model import (
    GROUPS,
    ITEM_UNITS,
    TRAIN,
    TRAIN_PREFIX,
    Conversion,
    FileSpec,
    Kind,
    Registry,
    Source,
    SourceRef,
    Subset,
    Task,
)

REGISTRY_DIR = Path(__file__).parent  # kinds.yaml, train.yaml and costs.yaml sit beside the code that loads them
SCHEMA_DIR = REGISTRY_DIR / "schemas"
# One folder per dataset, each its sources.yaml, subsets.yaml and recipes.yaml: the shape of an extra folder, read
# by the same code (datasets/README.md); datasets/order.yaml orders them.
DATASETS_DIR = REGISTRY_DIR.parent / "datasets"
# Folders of registry entries added to the shipped ones (docs/conversions/subsets.md, "Adding a subset"). An
# environment variable rather than a config key: every process of a run loads the registry (the CLI, each
# Snakemake job, a cluster job), and only the environment reaches them all, config or not.
EXTRA_REGISTRY_ENV = "MEDHEB_EXTRA_REGISTRY"


@functools.cache
def load_schema(name: str) -> dict:
    return textparse.read_yaml(SCHEMA_DIR / name)


def check_schema(document: dict, schema_name: str, what: str, error=RegistryError) -> None:
    """Validate a document against one of the package's schemas; name the failing place."""
    import jsonschema  # here: the commands that load no registry or config never import it

    validator = jsonschema.Draft202012Validator(load_schema(schema_name))
    # Checked as a copy whose reprs are bounded: jsonschema quotes a refused value whole in its message
    problems = sorted(validator.iter_errors(briefly(document)), key=lambda e: list(e.absolute_path))
    if problems:
        lines = [f"  at {place(p.absolute_path)}: {p.message[:300]}" for p in problems[:10]]
        raise error(f"{what} does not match {schema_name}:\n" + "\n".join(lines))


def place(path) -> str:
    """A schema error's place, 'sources/aptos2019/files/0', each part quoted briefly (a key may be long)."""
    return "/".join(part if len(part) <= 80 else f"{part[:80]}..." for part in map(str, path)) or "<top>"


def _read_yaml(path: Path) -> dict:
    try:  # bounded: an override file that is a FIFO is refused at once, never waited on
        document = textparse.read_yaml(path)
    except textparse.TextError as exc:
        raise RegistryError(f"cannot read registry file {exc}") from None
    if document is not None and not isinstance(document, dict):  # every registry file is keys and their values
        raise RegistryError(
            f"{path} holds {_yaml_type(document)} at its top, where a mapping of keys (key: value) belongs"
        )
    return document or {}


def _yaml_type(value) -> str:
    """What a YAML value is, in the words of a registry file's reader (never its repr: it may be huge)."""
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a text"
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return "a boolean"
    return "a number" if isinstance(value, int | float) else f"a {type(value).__name__}"  # a date, a timestamp


def _file_spec(raw: dict, index: int, variant_fields: dict, variant: str | None, source_id: str) -> FileSpec:
    def fill(text: str) -> str:
        try:
            return text.format(**variant_fields)
        except KeyError as exc:
            raise RegistryError(f"source {source_id!r}: {text!r} uses {exc} which its variant lacks") from None

    md5 = raw.get("md5")
    if isinstance(md5, dict):
        md5 = md5.get(variant)
    paths = raw.get("path", ())
    paths = (paths,) if isinstance(paths, str) else tuple(paths)
    npz = raw.get("npz")
    if npz is not None:
        if "size" not in variant_fields:
            raise RegistryError(f"source {source_id!r}: an npz file needs a variant with a size field")
        npz = {**npz, "size": int(variant_fields["size"])}
    spec = FileSpec(
        id=raw.get("id", f"file{index}"),
        paths=tuple(fill(p) for p in paths),
        glob=fill(raw["glob"]) if "glob" in raw else None,
        min_count=raw.get("min_count", 1),
        md5=md5,
        npz=npz,
        url=fill(raw["url"]) if "url" in raw else None,
        split=raw.get("split", "test"),
        about=raw.get("about"),
        holds=tuple(raw.get("holds", ())),
        shards=raw.get("shards", False),
        unpublished=raw.get("unpublished"),
    )
    if spec.glob and spec.holds and spec.glob_folder is None:
        raise RegistryError(
            f"source {source_id!r}, file {spec.id}: holds needs a folder before the glob's first wildcard"
        )
    if spec.shards and not spec.glob:
        raise RegistryError(f"source {source_id!r}, file {spec.id}: shards describes the matches of a glob")
    return spec


def _source(source_id: str, raw: dict, chosen_variant: str | None) -> Source:
    variant_fields: dict = {}
    variant = None
    if "variant" in raw:
        spec = raw["variant"]
        variant = str(chosen_variant or spec["default"])
        if variant not in spec["choices"]:
            raise RegistryError(
                f"source {source_id!r}: variant {variant!r} is not one of {sorted(spec['choices'])} "
                f"(set source_variants: {{{source_id}: ...}} in the config)"
            )
        variant_fields = dict(spec["choices"][variant])
    elif chosen_variant is not None:
        raise RegistryError(f"source {source_id!r} has no variants, but the config sets one")
    files = tuple(_file_spec(f, i, variant_fields, variant, source_id) for i, f in enumerate(raw["files"]))
    ids = [f.id for f in files]
    if len(set(ids)) != len(ids):
        raise RegistryError(f"source {source_id!r} has duplicate file ids: {ids}")
    return Source(
        id=source_id,
        name=raw["name"],
        homepage=raw["homepage"],
        download=raw["download"],
        licence=raw["licence"],
        access=raw["access"],
        raw_dir=raw["raw_dir"],
        files=files,
        instructions=raw["instructions"].strip(),
        variant=variant,
        project_folder=raw.get("project_folder"),
    )


def _subset(raw: dict) -> Subset:
    refs = []
    for ref in raw["sources"]:
        if isinstance(ref, str):
            refs.append(SourceRef(ref))
        else:
            refs.append(SourceRef(ref["id"], tuple(ref["files"])))
    conversions = []
    for index, conv in enumerate(raw["conversions"]):
        name = conv.get("name") or (conv["kind"] if len(raw["conversions"]) == 1 else f"{conv['kind']}{index}")
        params = dict(conv.get("params", {}))
        conversions.append(
            Conversion(
                conv["kind"],
                name,
                params,
                conv.get("shards", 1),
                conv.get("split", "test"),
                conv.get("counts", {}),
                conv.get("raw_file"),
            )
        )
    image_root = raw.get("image_root")
    tasks = tuple(
        Task(
            file=t["file"],
            eval=t["eval"],
            name=t.get("name", t["eval"]),
            parser=t["parser"],
            type=t.get("type", "local"),
            image_root=t.get("image_root") or (image_root.rstrip("/") if image_root else None),
        )
        for t in raw["tasks"]
    )
    return Subset(
        group=raw["group"],
        folder=raw["folder"],
        tasks=tasks,
        image_root=image_root,
        sources=tuple(refs),
        conversions=tuple(conversions),
        fingerprint=raw.get("fingerprint"),
        redistributed=raw.get("redistributed", True),
    )


def load_registry(overrides: str | Path | None = None, variants: dict | None = None, extras: bool = True) -> Registry:
    """Load and check the registry; `overrides` replaces per-source file lists (demo, own checksums);
    `extras=False` reads the shipped dataset folders alone, without the folders of MEDHEB_EXTRA_REGISTRY."""
    train = _read_yaml(REGISTRY_DIR / "train.yaml")
    document = {
        "sources": {},
        "subsets": [],
        "train_files": train.get("train_files") or {},
        "no_subset": train.get("no_subset") or [],
    }
    declared: recipes.Declared = {}  # the folders' recipes, by kind
    for folder in dataset_dirs():
        _add_folder(document, declared, folder, "a shipped dataset folder")
    document["subsets"].sort(key=_shipped_order)  # an extra folder's subsets follow, in the order it gives
    for folder in extra_registry_dirs() if extras else ():
        _add_folder(document, declared, folder, EXTRA_REGISTRY_ENV)
    counted = _npz_files(document)  # before the overrides, which may list a source's files without them
    # Each folder's files were checked as they were added (naming the file); what is left is train.yaml's part,
    # and the entries an override file changed.
    check_schema(_part(document, "train_files", "no_subset"), "registry.schema.yaml", str(REGISTRY_DIR / "train.yaml"))
    if overrides:
        changed = _apply_overrides(document, Path(overrides))
        check_schema(changed, "registry.schema.yaml", f"{overrides}, applied to the registry,")
    variants = variants or {}
    unknown = set(variants) - set(document["sources"])
    if unknown:
        raise RegistryError(f"source_variants names unknown sources: {sorted(unknown)}")
    sources = {sid: _source(sid, raw, variants.get(sid)) for sid, raw in document["sources"].items()}
    subsets = tuple(_subset(raw) for raw in document["subsets"])
    train_files = {path: key for key, paths in document["train_files"].items() for path in paths}
    train_files.update(dict.fromkeys(document["no_subset"]))
    registry = Registry(sources, subsets, recipes.merged(load_kinds(), declared), train_files)
    _check_references(registry)
    _check_counts(registry, counted)
    conversions = [(subset.key, conversion) for subset in subsets for conversion in subset.conversions]
    for where, conversion in conversions:
        check_params(registry.kinds, where, conversion)
        rawfile.check(where, conversion)
    return registry


@functools.cache
def load_kinds() -> dict[str, Kind]:
    """The conversion kinds of kinds.yaml, each parameter schema resolved against the file's $defs; without
    their recipes, which the dataset folders declare (recipes.merged adds them)."""
    document = _read_yaml(REGISTRY_DIR / "kinds.yaml")
    definitions = document.get("$defs", {})
    kinds = {}
    for name, raw in document["kinds"].items():
        params = {**raw["params"], "$defs": definitions}
        kinds[name] = Kind(
            name,
            raw["module"],
            dict(raw["resources"]),
            params,
            raw.get("recipe_param"),
            items=raw.get("items", "files"),
        )
        _check_recipe_declarations(kinds[name], raw)
    return kinds


def _check_recipe_declarations(kind: Kind, raw: dict) -> None:
    """kinds.yaml itself: a kind's item unit is one there is, and its recipe parameter one of its params (a
    typo there would make every subset of its recipes fail to load); its recipes are the folders'."""
    if kind.items not in ITEM_UNITS:
        raise RegistryError(f"kinds.yaml: kind {kind.name}: items is one of {ITEM_UNITS}, not {kind.items!r}")
    if "recipes" in raw:
        raise RegistryError(
            f"kinds.yaml: kind {kind.name}: recipes are declared in the dataset folders' recipes.yaml "
            "(datasets/README.md), not here"
        )
    if kind.recipe_param and kind.recipe_param not in kind.params.get("properties", {}):
        raise RegistryError(f"kinds.yaml: kind {kind.name}: recipe_param {kind.recipe_param!r} is none of its params")


def check_params(kinds: dict[str, Kind], subset_key: str, conversion: Conversion) -> None:
    """Raise naming the subset, the conversion and the key when params do not fit the kind's schema."""
    where = f"{subset_key}/{conversion.name}"
    if conversion.kind not in kinds:
        hint = did_you_mean(conversion.kind, kinds)
        raise RegistryError(f"{where}: unknown conversion kind {conversion.kind!r}{hint}")
    schema = kinds[conversion.kind].params
    known = list(schema.get("properties", {}))
    for key in conversion.params:
        if key not in known:
            raise RegistryError(
                f"{where}: unknown parameter {key!r} of kind {conversion.kind}{did_you_mean(key, known)} "
                f"(it takes: {', '.join(known) or 'none'})"
            )
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema)
    for problem in sorted(validator.iter_errors(briefly(conversion.params)), key=lambda e: list(e.absolute_path)):
        key = place(problem.absolute_path) if problem.absolute_path else "params"
        raise RegistryError(f"{where}: parameter {key!r}: {problem.message[:300]}")
    check_recipes(kinds[conversion.kind], where, conversion)


def recipe_names(kind: Kind, params: dict, param: str | None = None) -> list[tuple[str, str]]:
    """(parameter, recipe name) of each name `params` gives in `param` (default the kind's recipe_param): one,
    or one per source variant ("recipe/<variant>")."""
    param = param or kind.recipe_param
    value = params.get(param) if param else None
    if value is None:
        return []
    if isinstance(value, dict):
        return [(f"{param}/{variant}", name) for variant, name in value.items()]
    return [(param, value)]


def check_recipes(kind: Kind, where: str, conversion: Conversion) -> None:
    """Every recipe name the conversion gives (its train twin's too, every source variant's) is one the kind
    declares, and the parameters each needs are given: a misspelt name stops the load, never a job."""
    if kind.recipe_param is None:
        return
    for param in (kind.recipe_param, TRAIN_PREFIX + kind.recipe_param):
        for label, name in recipe_names(kind, conversion.params, param):
            kind.recipe(name, where, label)
    for twin in conversion.twins():
        for label, name in recipe_names(kind, twin.params):
            missing = [key for key in kind.recipes[name].get("requires", ()) if key not in twin.params]
            if missing:
                side = f" (train twin {twin.name})" if twin.split == TRAIN else ""
                raise RegistryError(
                    f"{where}: recipe {name!r} of kind {kind.name} ({label}) needs parameter "
                    f"{', '.join(map(repr, missing))}{side}"
                )


def _part(document: dict, *keys: str) -> dict:
    return {key: document[key] for key in keys if key in document}


def _apply_overrides(document: dict, path: Path) -> dict:
    """Apply an override file; returns the entries it changed, {"sources": {id: entry}, "subsets": [entry]}."""
    data = _read_yaml(path)
    if set(data) - {"sources", "subsets"}:
        raise RegistryError(f"{path}: an override file holds only a 'sources' and a 'subsets' mapping")
    for name, example in (
        ("sources", "{aptos2019: {files: [...]}}"),
        ("subsets", "{2D_Task/APTOS: {fingerprint: ...}}"),
    ):
        if not isinstance(data.get(name) or {}, dict):
            raise RegistryError(f"{path}: '{name}' is {_yaml_type(data[name])}; it must be a mapping like {example}")
    subsets = _override_fingerprints(document, path, data.get("subsets") or {})
    sources = {}
    for source_id, fields in (data.get("sources") or {}).items():
        if source_id not in document["sources"]:
            hint = did_you_mean(str(source_id), document["sources"])
            raise RegistryError(f"{path}: unknown source {quoted(source_id)}{hint}")
        if not isinstance(fields, dict) or set(fields) - {"files"}:
            raise RegistryError(f"{path}: only 'files' can be overridden (source {source_id!r})")
        sources[source_id] = document["sources"][source_id] = {**document["sources"][source_id], **fields}
    return {"sources": sources, "subsets": subsets}


def _check_references(registry: Registry) -> None:
    keys = [s.key for s in registry.subsets]
    duplicates = {k for k in keys if keys.count(k) > 1}
    if duplicates:
        raise RegistryError(f"duplicate subsets in the registry: {sorted(duplicates)}")
    for subset in registry.subsets:
        if (subset.group == "Text_Task") != subset.is_text:
            raise RegistryError(f"{subset.key}: text subsets and only they have no image_root")
        if any(task.is_text != subset.is_text for task in subset.tasks):
            raise RegistryError(f"{subset.key}: text_qa is the parser of text subsets, and only of them")
        names = [c.name for conv in subset.conversions for c in conv.twins()]  # twins share the name space
        if len(set(names)) != len(names):
            raise RegistryError(f"{subset.key}: conversion names must differ: {names}")
        for ref in subset.sources:
            source = registry.source(ref.source)
            for file_id in ref.files or ():
                source.file(file_id)
    for path, key in registry.train_files.items():
        if key is not None and key not in keys:
            raise RegistryError(f"train.yaml lists {path} under {key!r}, which is no subset{did_you_mean(key, keys)}")


def _npz_files(document: dict) -> dict[str, set]:
    """Source id -> the ids of its files that are npz archives with split counts (sources.yaml `npz`); read
    before the schema check, so a malformed entry is left to it."""
    return {
        source_id: {
            raw.get("id", f"file{i}") for i, raw in enumerate(source["files"]) if isinstance(raw, dict) and "npz" in raw
        }
        for source_id, source in document["sources"].items()
        if isinstance(source, dict) and isinstance(source.get("files"), list)
    }


def _check_counts(registry: Registry, npz_files: dict[str, set]) -> None:
    """Every conversion that converts anything states its full-download items for each split it builds (or
    reads an npz file the registry counts: `npz_files`), so that `plan` counts it before anything is
    downloaded; a count for a split it does not build is a typo."""
    for subset in registry.subsets:
        counted_npz = any(  # one of the files it reads (all of a source's, unless it names some)
            npz & set(ref.files or npz) for ref in subset.sources for npz in [npz_files.get(ref.source, set())]
        )
        for entry in subset.conversions:
            twins = entry.twins()
            where = f"subsets.yaml: {subset.key}/{entry.name}"
            stray = set(entry.counts) - {twin.split for twin in twins}
            if stray:
                raise RegistryError(f"{where}: counts for {sorted(stray)}, a split it does not build")
            if registry.kinds[entry.kind].module is None or counted_npz:
                continue
            for twin in twins:
                if twin.full_count is None:
                    raise RegistryError(
                        f"{where}: no full-download item count for its {twin.split} split; add "
                        f"counts: {{{twin.split}: {{items: N, basis: where N comes from}}}} "
                        "(docs/conversions/subsets.md)"
                    )


def _override_fingerprints(document: dict, path: Path, subsets: dict) -> list[dict]:
    """`subsets: {group/folder: {fingerprint: ...}}`: the digest a lab publishes for its build of a subset;
    returns the entries changed."""
    entries = {f"{raw['group']}/{raw['folder']}": raw for raw in document["subsets"]}
    for key, fields in subsets.items():
        if key not in entries:
            hint = did_you_mean(str(key), entries)
            raise RegistryError(f"{path}: unknown subset {quoted(key)}{hint} (use group/folder)")
        if not isinstance(fields, dict) or set(fields) - {"fingerprint"}:
            raise RegistryError(f"{path}: only 'fingerprint' can be overridden (subset {key!r})")
        entries[key]["fingerprint"] = fields["fingerprint"]
    return [entries[key] for key in subsets]


def extra_registry_dirs() -> list[Path]:
    """The folders MEDHEB_EXTRA_REGISTRY names (separated as PATH is), in order."""
    value = os.environ.get(EXTRA_REGISTRY_ENV, "")
    folders = [Path(part).resolve() for part in value.split(os.pathsep) if part]
    for folder in folders:
        if not folder.is_dir():
            raise RegistryError(f"{EXTRA_REGISTRY_ENV} names {folder}, which is not a folder")
    return folders


def dataset_dirs() -> list[Path]:
    """The shipped dataset folders: those datasets/order.yaml names, in its order (that of `list`, `check`
    and the docs' tables), then any other by name."""
    path = DATASETS_DIR / "order.yaml"
    order = _read_yaml(path).get("order") or []
    folders = {p.name: p for p in DATASETS_DIR.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))}
    wrong = [name for name in order if name not in folders or order.count(name) > 1]
    if wrong:
        raise RegistryError(f"{path}: order names each folder of {DATASETS_DIR} at most once, not {wrong}")
    return [folders[name] for name in order] + [folders[name] for name in sorted(set(folders) - set(order))]


def _shipped_order(raw: dict) -> tuple:
    """Subsets by task group (GROUPS), then by folder ignoring case; an unknown group last, for the schema."""
    group, folder = str(raw.get("group")), str(raw.get("folder"))
    return (GROUPS.index(group) if group in GROUPS else len(GROUPS), folder.lower(), folder)


# What a dataset folder's sources.yaml and subsets.yaml hold at their top (preprocess/datasets/README.md).
FOLDER_FILES = {
    "sources": (dict, "a mapping of source ids, each to its entry (name: ..., homepage: ..., files: ...)"),
    "subsets": (list, "a list of subset entries, each a mapping (- group: ..., folder: ..., tasks: ...)"),
}


def _folder_file(path: Path, name: str, schema: bool = True):
    """The `name` value of a dataset folder's `name`.yaml, checked before any of it is used, the file named:
    its shape (a list where a mapping belongs never reaches the code that merges folders), then with `schema`
    each entry against the registry's schema."""
    value = _read_yaml(path).get(name)
    kind, shape = FOLDER_FILES[name]
    if value is not None and not isinstance(value, kind):
        raise RegistryError(
            f"{path}: '{name}' is {_yaml_type(value)}; it must be {shape} (preprocess/datasets/README.md)"
        )
    entries = enumerate(value or ()) if kind is list else (value or {}).items()
    for key, entry in entries:
        if not isinstance(entry, dict):
            place = f"entry {key + 1}" if kind is list else f"source {quoted(key)}"
            raise RegistryError(
                f"{path}: {place} of '{name}' is {_yaml_type(entry)}; '{name}' must be {shape} "
                "(preprocess/datasets/README.md)"
            )
    if schema and value is not None:
        check_schema({name: value}, "registry.schema.yaml", str(path))
    return value


def folder_entries(folder: Path, name: str):
    """The `name` value ("sources": a mapping, "subsets": a list of mappings) of a dataset folder's
    `name`.yaml, its shape checked (its entries are the registry load's to check), empty when the folder has no
    such file."""
    path = folder / f"{name}.yaml"
    value = _folder_file(path, name, schema=False) if path.is_file() else None
    return value or FOLDER_FILES[name][0]()


def _add_folder(document: dict, declared: recipes.Declared, folder: Path, what: str) -> None:
    """Add the sources, subsets and recipes of a dataset folder (shipped or extra); one that names a source,
    subset or recipe of an earlier folder is refused: a folder adds entries, it never replaces one."""
    files = {name: folder / f"{name}.yaml" for name in ("sources", "subsets")}
    found = {name: _folder_file(path, name) if path.exists() else None for name, path in files.items()}
    if not any(found.values()):
        raise RegistryError(f"{folder} ({what}) holds no sources.yaml 'sources' or subsets.yaml 'subsets'")
    sources, subsets = found["sources"] or {}, found["subsets"] or []
    for source_id, raw in sources.items():
        if source_id in document["sources"]:
            raise RegistryError(f"{folder / 'sources.yaml'}: source {source_id!r} is in the registry already")
        document["sources"][source_id] = raw
    keys = {f"{raw['group']}/{raw['folder']}" for raw in document["subsets"]}
    for raw in subsets:
        key = f"{raw.get('group')}/{raw.get('folder')}"
        if key in keys:
            raise RegistryError(f"{folder / 'subsets.yaml'}: subset {key!r} is in the registry already")
        document["subsets"].append(raw)
    path = folder / "recipes.yaml"
    if path.exists():
        declaration = _read_yaml(path)
        check_schema(declaration, "recipes.schema.yaml", str(path))
        recipes.collect(declared, load_kinds(), declaration["recipes"], path)
