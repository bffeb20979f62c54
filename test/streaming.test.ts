import { describe, expect, it } from "vitest";
import { StatusSchema } from "../src/schemas/status";
import { call, json, post, registerUser, valid } from "./helpers";
import { openSocket, payloads } from "./streams";

describe("streaming: WebSocket basics", () => {
  it("delivers a new public status to an anonymous public listener, as a Status in a JSON string", async () => {
    const a = await registerUser();
    const socket = await openSocket("stream=public");
    const s = await post(a, { status: "hello stream" });
    const frame = await socket.next((f) => f.event === "update");
    expect(frame.stream).toEqual(["public"]);
    expect(typeof frame.payload).toBe("string");
    const status = valid(StatusSchema, JSON.parse(frame.payload!));
    expect(status.id).toBe(s.id);
    expect(status.content).toContain("hello stream");
    await socket.close();
  });

  it("answers 401 for a bad token and 404 for an unknown stream, before any upgrade", async () => {
    const bad = await call("/api/v1/streaming?stream=public&access_token=nope", { headers: { Upgrade: "websocket" } });
    expect(bad.status).toBe(401);
    expect(await bad.json()).toEqual({ error: "Invalid access token" });
    const unknown = await call("/api/v1/streaming?stream=nonsense", { headers: { Upgrade: "websocket" } });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: "Unknown stream type" });
    const user = await json("/api/v1/streaming?stream=user", { headers: { Upgrade: "websocket" }, status: 401 });
    expect(user).toEqual({ error: "Missing access token" });
  });

  it("a user stream gets the user's own post and followed accounts' posts", async () => {
    const [a, b] = [await registerUser(), await registerUser()];
    await json(`/api/v1/accounts/${b.id}/follow`, { method: "POST", token: a.token });
    const socket = await openSocket(`stream=user&access_token=${a.token}`);
    const mine = await post(a, { status: "mine", visibility: "private" });
    const theirs = await post(b, { status: "theirs", visibility: "private" });
    await socket.fence();
    expect(payloads(socket.frames, "update").map((s) => s.id).sort()).toEqual([mine.id, theirs.id].sort());
    expect(socket.frames.every((f) => f.stream[0] === "user")).toBe(true);
    await socket.close();
  });
});
