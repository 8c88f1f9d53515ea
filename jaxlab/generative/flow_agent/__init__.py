"""FlowAgent (area ``flow_agent``): conditional flow matching, and tool chains planned as latent trajectories.

Papers: Y. Lipman, R. Chen, H. Ben-Hamu, M. Nickel, M. Le, "Flow Matching for Generative Modeling",
arXiv:2210.02747; A. Tong et al., "Improving and Generalizing Flow-Based Generative Models with Minibatch Optimal
Transport", arXiv:2302.00482; T. Huang, S. Shang, Q. Chen, X. Su, Y. Chen, "Tools as Continuous Flow for Evolving
Agentic Reasoning" (FlowAgent), arXiv:2605.07339 (abstract only).

CFM follows the two CFM papers. FlowAgent is reconstructed from its abstract: the abstract's components (tools in
a semantic space, a tool chain generated as one latent trajectory by conditional flow matching, decoding by
proximity, re-planning in a closed loop, step-wise baselines) are each given a **[chosen]** concrete form at toy
scale, on a synthetic typed tool world; :mod:`.planner`'s docstring states the model and every choice.

Modules: :mod:`.flow_matching` (CFM paths, loss, couplings, ODE sampling, training), :mod:`.world` (the typed
tool world, shortest plans, plan <-> trajectory coding), :mod:`.episode` (the closed-loop environment),
:mod:`.planner` (the FlowAgent velocity nets, training and planning), :mod:`.stepwise` (the step-wise
baselines) and :mod:`.evaluation` (closed-loop metrics per horizon).
"""

from jaxlab.generative.flow_agent import (
    flow_matching,
    papers,  # noqa: F401  (registers the BibTeX entries)
)
from jaxlab.generative.flow_agent.episode import (
    EpisodeState,
    EpisodeStepInfo,
    episode_algorithm,
    episode_init,
    episode_step,
    plan_valid,
    run_episode,
    run_episodes,
)
from jaxlab.generative.flow_agent.evaluation import (
    evaluate,
)
from jaxlab.generative.flow_agent.flow_matching import (
    CFMTrainInfo,
    VelocityMLP,
    cfm_fit,
    cfm_loss,
    cfm_path,
    cfm_to_rf_velocity,
    gaussian_min_loss,
    gaussian_optimal_velocity,
    ode_algorithm,
    ode_sample,
    ot_pairing,
    path_length_ratio,
    rf_to_cfm_velocity,
    sinkhorn_log,
    train_scan,
)
from jaxlab.generative.flow_agent.planner import (
    FlowAgentPlanner,
    OraclePlanner,
    TrajectoryTransformer,
    TrajectoryVelocity,
    densify_trajectory,
    plan_flowagent,
    train_flowagent,
    trajectory_knots,
)
from jaxlab.generative.flow_agent.stepwise import (
    StepwiseAgent,
    StepwisePolicy,
    train_stepwise,
)
from jaxlab.generative.flow_agent.world import (
    K_DEFAULT,
    N_MAX,
    Tasks,
    ToolWorld,
    decode_trajectory,
    encode_plan,
    make_tool_world,
    reference_plan,
    shortest_plans,
    task_condition,
    training_tasks,
)

__all__ = [
    "K_DEFAULT",
    "N_MAX",
    "CFMTrainInfo",
    "EpisodeState",
    "EpisodeStepInfo",
    "FlowAgentPlanner",
    "OraclePlanner",
    "StepwiseAgent",
    "StepwisePolicy",
    "Tasks",
    "ToolWorld",
    "TrajectoryTransformer",
    "TrajectoryVelocity",
    "VelocityMLP",
    "cfm_fit",
    "cfm_loss",
    "cfm_path",
    "cfm_to_rf_velocity",
    "decode_trajectory",
    "densify_trajectory",
    "encode_plan",
    "episode_algorithm",
    "episode_init",
    "episode_step",
    "evaluate",
    "flow_matching",
    "gaussian_min_loss",
    "gaussian_optimal_velocity",
    "make_tool_world",
    "ode_algorithm",
    "ode_sample",
    "ot_pairing",
    "path_length_ratio",
    "plan_flowagent",
    "plan_valid",
    "reference_plan",
    "rf_to_cfm_velocity",
    "run_episode",
    "run_episodes",
    "shortest_plans",
    "sinkhorn_log",
    "task_condition",
    "train_flowagent",
    "train_scan",
    "train_stepwise",
    "training_tasks",
    "trajectory_knots",
]
