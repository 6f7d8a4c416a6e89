"""PyTorch modules with Canopy's architectures (nets.Config), named and
laid out as Canopy's weights files: HeadAlphaZero's residual tower and
HeadPPO's plain CNN. Imported only when torch is wanted."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class _ConvBN(nn.Module):
    def __init__(self, cin, cout, k):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, padding=k // 2, bias=False)
        self.bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        return F.relu(self.bn(self.conv(x)))


class _Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(y)) + x)


class _PolicyHead(nn.Module):
    def __init__(self, c, filters, hw, actions):
        super().__init__()
        self.conv = nn.Conv2d(c, filters, 1, bias=False)
        self.bn = nn.BatchNorm2d(filters)
        self.fc = nn.Linear(filters * hw, actions)

    def forward(self, x):
        return self.fc(F.relu(self.bn(self.conv(x))).flatten(1))


class _ValueHead(nn.Module):
    """The scalar head gives [B] (the mover's value); a per-player head
    (players > 1) [B, players], entry k the value of player (mover + k)
    mod players."""

    def __init__(self, c, filters, hw, hidden, players):
        super().__init__()
        self.players = players
        self.conv = nn.Conv2d(c, filters, 1, bias=False)
        self.bn = nn.BatchNorm2d(filters)
        self.fc1 = nn.Linear(filters * hw, hidden)
        self.fc2 = nn.Linear(hidden, max(players, 1))

    def forward(self, x):
        v = F.relu(self.bn(self.conv(x))).flatten(1)
        v = torch.tanh(self.fc2(F.relu(self.fc1(v))))
        return v if self.players > 1 else v.squeeze(1)


class AlphaZeroNet(nn.Module):
    """nets.HeadAlphaZero: forward(x [B, C, H, W]) -> (logits [B, A], value
    [B]), or value [B, P] with a per-player value head (value_players P)."""

    def __init__(self, cfg):
        super().__init__()
        c, hw = cfg["channels"], cfg["height"] * cfg["width"]
        self.cfg = cfg
        self.stem = _ConvBN(cfg["input_planes"], c, 3)
        self.blocks = nn.ModuleList([_Block(c) for _ in range(cfg.get("blocks", 0))])
        self.policy = _PolicyHead(c, cfg.get("policy_filters") or 2, hw, cfg["policy_size"])
        self.value = _ValueHead(c, cfg.get("value_filters") or 1, hw, cfg["value_hidden"], cfg.get("value_players") or 0)

    def forward(self, x):
        x = x.reshape(x.shape[0], self.cfg["input_planes"], self.cfg["height"], self.cfg["width"])
        x = self.stem(x)
        for b in self.blocks:
            x = b(x)
        return self.policy(x), self.value(x)


class PPONet(nn.Module):
    """nets.HeadPPO: 3x3 convs with bias + ReLU, dense + ReLU, actor, tanh critic."""

    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        chans = [cfg["input_planes"]] + list(cfg["conv_channels"])
        self.convs = nn.ModuleList([nn.Conv2d(a, b, 3, padding=1) for a, b in zip(chans, chans[1:])])
        self.fc = nn.Linear(chans[-1] * cfg["height"] * cfg["width"], cfg["dense"])
        self.actor = nn.Linear(cfg["dense"], cfg["policy_size"])
        self.critic = nn.Linear(cfg["dense"], 1)

    def forward(self, x):
        x = x.reshape(x.shape[0], self.cfg["input_planes"], self.cfg["height"], self.cfg["width"])
        for c in self.convs:
            x = F.relu(c(x))
        x = F.relu(self.fc(x.flatten(1)))
        return self.actor(x), torch.tanh(self.critic(x)).squeeze(1)


def build(cfg):
    head = cfg.get("head") or "alphazero"
    if head == "alphazero":
        m = AlphaZeroNet(cfg)
    elif head == "ppo":
        m = PPONet(cfg)
    else:
        raise ValueError(f"unknown head {head!r} (want alphazero or ppo)")
    m.canopy_config = dict(cfg)
    return m
