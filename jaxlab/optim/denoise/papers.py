"""The papers behind the gradient denoisers of ``jaxlab.optim.denoise`` (registered once, on import) and their keys."""

from __future__ import annotations

from jaxlab.core.citations import register_paper

__all__ = ["DENOISE", "DISK", "DPSGD", "IGT", "NSGD"]

DENOISE = "graddenoise2026"
DISK = "zhang2025disk"
IGT = "arnold2019igt"
NSGD = "cutkosky2020momentum"
DPSGD = "abadi2016dpsgd"

register_paper(DENOISE, """
@misc{graddenoise2026,
  title = {Optimizer-agnostic gradient denoising: maximum-likelihood and recursive two-query estimators},
  year = {2026},
  note = {Full text, exact title, authors and arXiv id not located; known from its abstract only, which begins
          "Noisy gradient estimates are ubiquitous in machine learning". The title above is descriptive.},
}""")

register_paper(DISK, """
@inproceedings{zhang2025disk,
  title = {DiSK: Differentially Private Optimizer with Simplified Kalman Filter for Noise Reduction},
  author = {Zhang, Xinwei and Bu, Zhiqi and Balle, Borja and Hong, Mingyi and Razaviyayn, Meisam
            and Mirrokni, Vahab},
  booktitle = {International Conference on Learning Representations},
  note = {arXiv:2410.03883},
  year = {2025},
}""")

register_paper(IGT, """
@inproceedings{arnold2019igt,
  title = {Reducing the variance in online optimization by transporting past gradients},
  author = {Arnold, S{\\'e}bastien M. R. and Manzagol, Pierre-Antoine and Babanezhad, Reza
            and Mitliagkas, Ioannis and Le Roux, Nicolas},
  booktitle = {Advances in Neural Information Processing Systems},
  note = {arXiv:1906.03532},
  year = {2019},
}""")

register_paper(NSGD, """
@inproceedings{cutkosky2020momentum,
  title = {Momentum Improves Normalized SGD},
  author = {Cutkosky, Ashok and Mehta, Harsh},
  booktitle = {International Conference on Machine Learning},
  note = {arXiv:2002.03305},
  year = {2020},
}""")

register_paper(DPSGD, """
@inproceedings{abadi2016dpsgd,
  title = {Deep Learning with Differential Privacy},
  author = {Abadi, Martin and Chu, Andy and Goodfellow, Ian and McMahan, H. Brendan and Mironov, Ilya
            and Talwar, Kunal and Zhang, Li},
  booktitle = {ACM SIGSAC Conference on Computer and Communications Security},
  note = {arXiv:1607.00133},
  year = {2016},
}""")
