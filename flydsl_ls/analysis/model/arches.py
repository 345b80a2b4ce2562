"""The AMDGPU processors of the GCN5/CDNA/RDNA generations FlyDSL's LLVM knows (the
processor names in its bundled LLVM, plus gfx90a/gfx90c and the gfx940/gfx941 that earlier
FlyDSL releases accepted): what a setting, a file name or an arch guard may name."""

KNOWN_ARCHES = (
    "gfx900", "gfx902", "gfx904", "gfx906", "gfx908", "gfx909", "gfx90a", "gfx90c",
    "gfx940", "gfx941", "gfx942", "gfx950",
    "gfx1010", "gfx1011", "gfx1012", "gfx1013",
    "gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036",
    "gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153",
    "gfx1200", "gfx1201", "gfx1250", "gfx1251",
)
