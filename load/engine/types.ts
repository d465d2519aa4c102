export interface Credentials {
  user: string;
  password: string;
  hmac?: { publicKey: string; privateKey: string };
}
