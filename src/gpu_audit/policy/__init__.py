"""The policy language: schema, loader, compiled conditions, waivers and the engine."""
