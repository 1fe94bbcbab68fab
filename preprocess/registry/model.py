"""What the registry holds: sources and their files, subsets with their tasks and conversions, kinds, and the
registry itself with its look-ups (loader.py reads them from YAML and checks them)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from preprocess.errors import RegistryError, did_you_mean, quoted

GROUPS = ("2D_Task", "3D_Task", "Text_Task")
TEST, TRAIN = "test", "train"  # the split a conversion or a raw file serves
TRAIN_PREFIX = "train_"  # a conversion parameter `train_<name>` declares its train twin
# What one item of a kind is (kinds.yaml `items`): the files its sources' globs match in the raw root, or
# rows, members or links those files hold, which no glob counts (preprocess/sizing/counts.py)
ITEM_UNITS = ("files", "rows")


@dataclass(frozen=True)
class FileSpec:
    """One expected file (or glob) of a raw download, with variant fields already filled in."""

    id: str
    paths: tuple[str, ...] = ()
    glob: str | None = None
    min_count: int = 1
    md5: str | None = None
    npz: dict | None = field(default=None, hash=False, compare=False)
    url: str | None = None
    split: str = "test"  # train: needed only when the subset wants every split (preprocess/registry/splits.py)
    about: str | None = None  # what the file holds and why it is read, said with its problems
    holds: tuple[str, ...] = ()  # a folder's content, which may lie one level deeper (formats/unpacked.py)
    shards: bool = False  # the glob's matches are one complete set of Hugging Face shards
    # no public listing of the upstream holds it: {evidence, unblock} (preprocess/rawdata/unpublished.py)
    unpublished: dict | None = field(default=None, hash=False, compare=False)

    @property
    def label(self) -> str:
        return self.glob if self.glob else " | ".join(self.paths)

    @property
    def glob_folder(self) -> str | None:
        """The glob's folder before its first wildcard part (`PNG` of `PNG/**/*.png`), or None."""
        if self.glob is None:
            return None
        head = []
        for part in self.glob.split("/"):
            if set(part) & set("*?["):
                break
            head.append(part)
        return "/".join(head) or None


@dataclass(frozen=True)
class Source:
    id: str
    name: str
    homepage: str
    download: str
    licence: str
    access: str
    raw_dir: str
    files: tuple[FileSpec, ...]
    instructions: str
    variant: str | None = None
    project_folder: str | None = None  # a folder a whole-project download adds above the files (layout.raw_dir)

    def holds(self, folder: str) -> tuple[str, ...]:
        """The content the registry declares for raw folder `folder` (relative to the source's folder): the
        `holds` of the file spec whose path, or glob's folder, it is; () when none declares it."""
        for spec in self.files:
            if spec.holds and folder in (spec.glob_folder, *spec.paths):
                return spec.holds
        return ()

    def file(self, file_id: str) -> FileSpec:
        for spec in self.files:
            if spec.id == file_id:
                return spec
        raise RegistryError(
            f"source {self.id!r} has no file {file_id!r}{did_you_mean(file_id, [f.id for f in self.files])}"
        )


@dataclass(frozen=True)
class SourceRef:
    """A subset's use of a source: all of its files, or the named ones."""

    source: str
    files: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Conversion:
    kind: str
    name: str
    params: dict = field(default_factory=dict, hash=False, compare=False)
    shards: int = 1
    split: str = TEST  # train: built only when the subset wants every split (preprocess/registry/splits.py)
    # the items of a full download per split ({split: {items, basis}}), for `plan` before any download
    counts: dict = field(default_factory=dict, hash=False, compare=False)
    # how a release record's image path names its raw file (`medheb need`; subsets.yaml `raw_file`), or None
    raw_file: dict | None = field(default=None, hash=False, compare=False)

    @property
    def full_count(self) -> dict | None:
        """This conversion's full-download count ({items, basis}) from the registry, if it states one."""
        return self.counts.get(self.split)

    def twins(self) -> list[Conversion]:
        """This entry as the conversions it declares: itself, or its test conversion and its train twin
        `<name>_train`, which takes the `train_<param>` values (the test one never sees them)."""
        if self.split == TRAIN:
            return [self]
        train_keys = [key for key in self.params if key.startswith(TRAIN_PREFIX)]
        if not train_keys:
            return [self]
        test_params = {k: v for k, v in self.params.items() if k not in train_keys}
        train_params = {**test_params, **{key[len(TRAIN_PREFIX) :]: self.params[key] for key in train_keys}}
        return [
            replace(self, params=test_params),
            replace(self, name=f"{self.name}_{TRAIN}", params=train_params, split=TRAIN),
        ]


@dataclass(frozen=True)
class Task:
    """One task JSON file of a subset, as the benchmark's evaluation config lists it."""

    file: str
    eval: str  # the entry of the evaluation config
    name: str  # its dataset_name
    parser: str  # the evaluation loader that reads it (text_qa, image_cls, ..., volume_i2i)
    type: str  # eval_type: local | global
    image_root: str | None  # the folder its record paths are joined to, relative to DATA_BASEDIR

    @property
    def is_text(self) -> bool:
        return self.parser == "text_qa"


@dataclass(frozen=True)
class Subset:
    group: str
    folder: str
    tasks: tuple[Task, ...]
    image_root: str | None
    sources: tuple[SourceRef, ...]
    conversions: tuple[Conversion, ...]
    fingerprint: str | None = None  # the published digest of its images (preprocess/verify/attest.py), when known
    redistributed: bool = True  # False: the release ships only a LICENSE_NOTICE.md in its image folders

    @property
    def key(self) -> str:
        return f"{self.group}/{self.folder}"

    @property
    def is_text(self) -> bool:
        return self.image_root is None

    @property
    def source_ids(self) -> tuple[str, ...]:
        return tuple(ref.source for ref in self.sources)

    @property
    def task_files(self) -> tuple[str, ...]:
        return tuple(task.file for task in self.tasks)

    @property
    def group_config(self) -> str:
        """The evaluation config file that lists this subset's tasks."""
        return f"{self.group}.yaml"


@dataclass(frozen=True)
class Kind:
    """A conversion kind as kinds.yaml declares it, with the recipes the dataset folders declare for it."""

    name: str
    module: str | None  # "package.module" or "package.module:Attribute"; None: nothing to convert
    resources: dict = field(hash=False, compare=False)
    params: dict = field(hash=False, compare=False)  # JSON schema of the params
    recipe_param: str | None = None  # the parameter that names a recipe (its train_ twin too)
    recipes: dict = field(default_factory=dict, hash=False, compare=False)  # name -> entry (data, code, requires)
    items: str = "files"  # files: its sources' globs match its items; rows: rows, members or links no glob counts

    def item_unit(self, params: dict, variant: str | None = None) -> str:
        """What one item of a conversion with `params` is (kinds.yaml `items`, its recipe's when it says)."""
        name = params.get(self.recipe_param) if self.recipe_param else None
        if isinstance(name, dict):  # a recipe per source variant
            name = name.get(variant)
        return self.recipes.get(name, {}).get("items", self.items) if isinstance(name, str) else self.items

    def recipe(self, name: str, where: str = "", param: str | None = None) -> dict:
        """The declared entry of recipe `name`; RegistryError naming the place, the kind, the parameter and the
        name otherwise."""
        if name in self.recipes:
            return self.recipes[name]
        place = f"{where}: " if where else ""
        raise RegistryError(
            f"{place}unknown recipe {name!r} of kind {self.name} in parameter {param or self.recipe_param!r}"
            f"{did_you_mean(name, self.recipes)} (its recipes: {', '.join(self.recipes)})"
        )

    def code_reference(self, name: str) -> str | None:
        """Recipe `name`'s code as "package.module:attribute" (recipes.yaml may give the attribute alone: one of
        the kind's module), or None for a recipe of data only."""
        code = self.recipes[name].get("code")
        if code is None or ":" in code:
            return code
        return f"{self.module.partition(':')[0]}:{code}"


@dataclass(frozen=True)
class Registry:
    sources: dict[str, Source]
    subsets: tuple[Subset, ...]
    kinds: dict[str, Kind] = field(default_factory=dict, hash=False, compare=False)
    # the training config's Train_Data files (relative to Train_Data/) -> the subset answering for each (None:
    # a training set of no subset); registry/train.yaml
    train_files: dict[str, str | None] = field(default_factory=dict, hash=False, compare=False)

    def subset(self, name: str) -> Subset:
        """Look a subset up by 'group/folder', or by a folder name that only one group has."""
        matches = [s for s in self.subsets if name in (s.key, s.folder)]
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            keys = ", ".join(s.key for s in matches)
            raise RegistryError(f"subset name {quoted(name)} is ambiguous: it matches {keys}; use one of those")
        names = [s.key for s in self.subsets] + [s.folder for s in self.subsets]
        raise RegistryError(
            f"unknown subset {quoted(name)}{did_you_mean(name, names)}; `python -m preprocess list` shows them all"
        )

    def source(self, source_id: str) -> Source:
        try:
            return self.sources[source_id]
        except KeyError:
            raise RegistryError(f"unknown source {quoted(source_id)}{did_you_mean(source_id, self.sources)}") from None

    def select(self, selection) -> list[Subset]:
        """The subsets a config's `subsets:` value names ('all' or a list of names)."""
        if selection == "all":
            return list(self.subsets)
        chosen = []
        for name in selection:
            subset = self.subset(name)
            if subset not in chosen:
                chosen.append(subset)
        return chosen

    def files_needed(self, subset: Subset) -> dict[str, tuple[FileSpec, ...]]:
        """Source id -> the file specs the subset depends on."""
        needed = {}
        for ref in subset.sources:
            source = self.sources[ref.source]
            if ref.files is None:
                needed[ref.source] = source.files
            else:
                needed[ref.source] = tuple(source.file(f) for f in ref.files)
        return needed
