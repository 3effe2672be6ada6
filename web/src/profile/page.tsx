// A player's profile: their rating over time and their statistics as small charts.
import { useEffect, useState } from "preact/hooks";
import { api, ApiError } from "../api";
import { t, type Key } from "../i18n";
import { navigate } from "../router";
import { BOT_NAMES, type Stats } from "../types";
import { RatingLine, ShareBars, WonBars } from "./charts";
import "./profile.css";

const GROUPS = ["human", "easy", "medium", "hard"] as const;

function groupLabel(group: (typeof GROUPS)[number]): string {
  return group === "human" ? t("vs_human") : BOT_NAMES[group];
}

export function ProfilePage({ id, switchLang }: { id: string; switchLang: () => void }) {
  const [stats, setStats] = useState<Stats | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api.stats(id).then(setStats, (e: unknown) => setError(e instanceof ApiError ? e.message : String(e)));
  }, [id]);
  return (
    <div class="page profile">
      <header class="topbar">
        <a
          class="home"
          href="/"
          onClick={(e) => {
            e.preventDefault();
            navigate("/");
          }}
        >
          ← {t("home")}
        </a>
        <button type="button" class="link" onClick={switchLang}>
          {t("language")}
        </button>
      </header>
      <main class="profile-main">
        {error && (
          <p class="error" role="alert">
            {t("profileFailed", { reason: error })}
          </p>
        )}
        {stats && (
          <>
            <h1>
              {t("profile")}: <span class="name">{stats.name}</span>
            </h1>
            <div class="charts">
              <section class="panel">
                <h2>{t("ratingOverTime")}</h2>
                {stats.rating_history.length ? (
                  <RatingLine points={stats.rating_history} label={t("ratingOverTime")} />
                ) : (
                  <p class="muted">{t("noRating")}</p>
                )}
              </section>
              <section class="panel">
                <WonBars
                  title={t("matchesWon")}
                  rows={GROUPS.map((g) => ({ label: groupLabel(g), ...stats.matches[g] }))}
                />
                <WonBars title={t("handsWon")} rows={GROUPS.map((g) => ({ label: groupLabel(g), ...stats.hands[g] }))} />
              </section>
              <section class="panel">
                <ShareBars
                  title={t("handEnds")}
                  rows={(["knock", "gin", "big_gin", "undercut"] as const).map((r) => ({
                    label: t(`rate_${r}` as Key),
                    share: stats.rates[r],
                  }))}
                />
                <p>
                  {t("meanKnockDeadwood")}: <b>{stats.mean_knock_deadwood ?? "—"}</b>
                </p>
              </section>
              <section class="panel">
                <h2>{t("reviewBy")}</h2>
                <ShareBars
                  title={t("reviewedHands", { n: stats.reviewed_hands })}
                  rows={[{ label: t("accuracy"), share: stats.accuracy === null ? null : stats.accuracy / 100 }]}
                />
                <p>
                  {t("pointsLostPerHand")}: <b>{stats.points_lost_per_hand ?? "—"}</b>
                </p>
              </section>
            </div>
          </>
        )}
      </main>
    </div>
  );
}
