"""BibTeX entries used by Tree-of-Skill beyond the shared agents registry (PPO for the skill trainer)."""

from __future__ import annotations

from jaxlab.core.citations import register_paper

PPO = "ag_schulman2017ppo"

register_paper(PPO, """
@article{schulman2017ppo,
  title = {Proximal Policy Optimization Algorithms},
  author = {Schulman, John and Wolski, Filip and Dhariwal, Prafulla and Radford, Alec and Klimov, Oleg},
  journal = {arXiv preprint arXiv:1707.06347},
  year = {2017},
}""")
