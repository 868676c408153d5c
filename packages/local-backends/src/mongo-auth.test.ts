import { describe, expect, it } from "vitest";
import { carriesMongoCredentials, redactMongoUrl, withMongoCredentials } from "./mongo-auth";

describe("a MongoDB URL's login", () => {
  it("is the URL's own when it names a user or an authentication mechanism", () => {
    expect(carriesMongoCredentials("mongodb://app:secret@db.example.com/agentnet?tls=true")).toBe(true);
    expect(carriesMongoCredentials("mongodb+srv://app:secret@cluster.example.com/agentnet")).toBe(true);
    expect(carriesMongoCredentials("mongodb://db.example.com/agentnet?authMechanism=MONGODB-X509")).toBe(
      true,
    );
    expect(carriesMongoCredentials("mongodb://127.0.0.1:27017/agentnet")).toBe(false);
  });

  it("is added for the admin database, the password encoded", () => {
    const url = withMongoCredentials("mongodb://127.0.0.1:27017/agentnet", {
      username: "agentnet",
      password: "p/a@ss",
    });
    expect(url).toBe("mongodb://agentnet:p%2Fa%40ss@127.0.0.1:27017/agentnet?authSource=admin");
  });

  it("is printed with *** for the password, and a URL without one is printed as it is", () => {
    expect(redactMongoUrl("mongodb://agentnet:p%2Fa%40ss@127.0.0.1:27017/agentnet?authSource=admin")).toBe(
      "mongodb://agentnet:***@127.0.0.1:27017/agentnet?authSource=admin",
    );
    expect(redactMongoUrl("mongodb+srv://app:secret@cluster.example.com/agentnet")).toBe(
      "mongodb+srv://app:***@cluster.example.com/agentnet",
    );
    expect(redactMongoUrl("mongodb://127.0.0.1:27017/agentnet")).toBe("mongodb://127.0.0.1:27017/agentnet");
  });
});
