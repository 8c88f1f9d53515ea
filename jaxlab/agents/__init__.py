"""Agents (spec ``agents_systems.md`` sections B and C): behaviour trees and Tree-of-Skill chaining, and TopoScope
schematic rule verification (:mod:`~jaxlab.agents.toposcope`). Import the submodules directly."""
