"""The stages besides the conversions (placeholder)."""


def estimate_stages(settings, registry, conversions, plans) -> list:
    return []
